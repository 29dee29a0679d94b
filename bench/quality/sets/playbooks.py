"""Two sets of another style (issue 50): a mixin's alert rules, written with `message` (no summary, no
description), against that project's runbook, one long Markdown page with a section per alert.

    python -m bench.quality.sets.playbooks [--mirrors DIR]

Sources (public repositories, read from a checkout or a bare mirror under DIR, default /work/.mirror):
  - cortexproject/cortex-jsonnet: `cortex-mixin/docs/playbooks.md` (the memory) and
    `cortex-mixin/alerts/*.libsonnet` (the alerts: jsonnet, read for each rule's name, severity, group and
    `message`);
  - grafana/tempo: `operations/tempo-mixin/runbook.md` (the memory) and
    `operations/tempo-mixin-compiled/alerts.yaml` (the alerts).

The rule, fixed before any lookup was run:
  - An incident is one section of the page (a heading of the page's alert level, down to the next heading
    of that level or above): its title the first sentence of its text, its root cause the first paragraph,
    its on-call note the rest of the section (sub-sections included) up to 4,000 characters, code blocks,
    HTML and link targets dropped; the section's own alert name removed wherever it appears (as in
    `runbooks.py`). Sections of the page that name no alert are incidents too (memory only).
  - A query is each alert rule rendered as Alertmanager sends it (its `message`, its runbook link, labels
    `alertname`, `severity` and those the message names, filled with `runbooks.SAMPLE`; its `generatorURL`
    the link to the rule's expression, as `runbooks.generator_url` makes it, a jsonnet expression's `%s` as
    `cluster, namespace`: added 2026-12-06, a bare `/graph` before).
  - strict: the section headed by the alert's name; none: the page has no section for it (then nothing
    close is on record: lenient and facts are the strict ones), unless another section names a metric the
    rule's expression selects: then it is related (lenient and facts: those sections; ruling B of issue 82,
    2026-12-08). paraphrase: as in `runbooks.py`.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from pathlib import Path

import yaml

from bench.mirrors import MIRRORS, Tree, tree
from oncall_memory.domain.incident import Incident
from oncall_memory.domain.promql import metric_names

from . import SetQuery, write_set
from .runbooks import (
    Rule,
    _plain,
    generator_url,
    is_paraphrase,
    render,
    sample_labels,
    without_name,
)

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
_FENCE = re.compile(r"```.*?```", re.S)


def page_sections(markdown: str, level: int) -> dict[str, str]:
    """Each heading of `level` (`###`) and its text, down to the next heading of that level or above."""
    out: dict[str, str] = {}
    heading_re = re.compile(rf"^(#{{1,{level}}})\s+(.+?)\s*$", re.M)
    marks = list(heading_re.finditer(markdown))
    for i, m in enumerate(marks):
        if len(m.group(1)) != level:
            continue
        end = next((n.start() for n in marks[i + 1 :] if len(n.group(1)) <= level), len(markdown))
        out[m.group(2).strip("` ")] = markdown[m.end() : end]
    return out


def paragraphs(markdown: str) -> list[str]:
    text = _plain(_FENCE.sub(" ", markdown))
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if not ln.lstrip().startswith("#")]
        line = " ".join(" ".join(lines).replace("- ", " ").replace("* ", " ").split())
        if len(line) > 3:
            out.append(line)
    return out


def section_incident(source: str, name: str, markdown: str) -> Incident | None:
    parts = [without_name(p, name) for p in paragraphs(markdown)]
    parts = [p for p in parts if p]
    if not parts:
        return None
    first = parts[0][:600]
    title = _SENTENCE.split(first, maxsplit=1)[0][:200]
    rest = " ".join(parts[1:])[:4000]
    return Incident(id=f"{source}:{name}", title=title, root_cause=first, oncall_note=rest or None, source="runbook")


# -- the alert rules ------------------------------------------------------------------------------------------

_JSONNET_RULE = re.compile(r"alert:\s*'(?P<name>\w+)'")
_JSONNET_GROUP = re.compile(r"name:\s*'(?P<group>[\w.-]+)'\s*,\s*\n\s*rules:")
_MESSAGE = re.compile(r"message:\s*(?:\|\|\|\n(?P<block>.*?)\n\s*\|\|\||'(?P<single>(?:[^'\\]|\\.)*)')", re.S)
_SEVERITY = re.compile(r"severity:\s*'(\w+)'")
_EXPR = re.compile(r"expr:\s*(?:\|\|\|\n(?P<block>.*?)\n\s*\|\|\||'(?P<single>(?:[^'\\]|\\.)*)')", re.S)


def _jsonnet_text(message: str) -> str:
    """A message as jsonnet would format it with the mixin's config: the aggregation variables as the
    cluster/namespace labels, any other %(x)s left out, `%%` as `%`."""
    text = message.replace("%(alert_aggregation_variables)s", "{{ $labels.cluster }}/{{ $labels.namespace }}")
    text = re.sub(r"%\([^)]*\)s", "", text)
    return " ".join(text.replace("%%", "%").split())


def _jsonnet_expr(expr: str) -> str:
    """An expression as jsonnet would format it with the mixin's config: each `%s` (the aggregation labels,
    a job's name) as `cluster, namespace`, any %(x)s left out."""
    text = re.sub(r"%\([^)]*\)s", "", expr.replace("%s", "cluster, namespace"))
    return " ".join(text.replace("%%", "%").split())


def cortex_rules(t: Tree) -> list[Rule]:
    out = []
    for path in t.files("cortex-mixin/alerts"):
        if not path.endswith(".libsonnet"):
            continue
        source = t.read(path)
        groups = [(m.start(), m.group("group")) for m in _JSONNET_GROUP.finditer(source)]
        rules = list(_JSONNET_RULE.finditer(source))
        for i, m in enumerate(rules):
            body = source[m.end() : rules[i + 1].start() if i + 1 < len(rules) else len(source)]
            message = _MESSAGE.search(body)
            if message is None:
                continue
            group = next((g for at, g in reversed(groups) if at < m.start()), "cortex")
            severity = _SEVERITY.search(body)
            text = _jsonnet_text(message.group("block") or message.group("single") or "")
            expr = _EXPR.search(body)
            query = _jsonnet_expr(expr.group("block") or expr.group("single") or "") if expr else ""
            out.append(Rule(m.group("name"), group, severity.group(1) if severity else "warning", text, "", query))
    return out


def tempo_rules(t: Tree) -> list[Rule]:
    doc = yaml.safe_load(t.read("operations/tempo-mixin-compiled/alerts.yaml"))
    out = []
    for group in doc["groups"]:
        for r in group["rules"]:
            if "alert" in r:
                notes = r.get("annotations", {})
                severity = r.get("labels", {}).get("severity", "warning")
                out.append(Rule(r["alert"], group["name"], severity, notes.get("message", ""), "", r.get("expr", "")))
    return out


def payload(rule: Rule, runbook: str) -> dict:
    """The rule's alert as Alertmanager posts it: its `message` (and runbook link) as the annotations."""
    labels = sample_labels(rule)
    annotations = {"message": render(rule.summary, labels), "runbook_url": runbook}
    alert = {
        "status": "firing",
        "labels": labels,
        "annotations": {k: v for k, v in annotations.items() if v},
        "startsAt": "2026-11-01T03:12:00Z",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": generator_url("http://prometheus.monitoring:9090", rule.expr),
        "fingerprint": hashlib.sha256(f"{rule.name}{rule.summary}".encode()).hexdigest()[:16],
    }
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{rule.name}"}}',
        "status": "firing",
        "receiver": "oncall-memory",
        "groupLabels": {"alertname": rule.name},
        "commonLabels": labels,
        "alerts": [alert],
    }


def build(name: str, page: str, level: int, rules: list[Rule], link: str, about: str) -> tuple[int, int]:
    sections = page_sections(page, level)
    memory = {}
    for heading, text in sections.items():
        incident = section_incident(name, heading, text)
        if incident is not None:
            memory[heading] = incident
    queries = []
    for i, r in enumerate(rules):
        right = memory.get(r.name)
        answer = [right.id] if right else []
        # Ruling B (issue 82): an alert with no section of its own, when another section names its metric,
        # is related: neither a right answer nor a no-match alert (lenient: those sections; strict: none).
        related = (
            []
            if right
            else sorted(
                memory[h].id
                for h, text in sections.items()
                if h in memory and any(m in text for m in metric_names(r.expr))
            )
        )
        queries.append(
            SetQuery(
                alert={"pager": "alertmanager", "payload": payload(r, f"{link}#{r.name.lower()}")},
                strict=answer,
                lenient=answer or related,
                facts=answer or related,
                paraphrase=right is not None and is_paraphrase(r, right),
                key=f"{r.name}#{i}",
            )
        )
    write_set(name, memory.values(), queries, about)
    return len(memory), len(queries)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    args = ap.parse_args()
    cortex = tree(args.mirrors, "cortexproject/cortex-jsonnet")
    tempo = tree(args.mirrors, "grafana/tempo")
    built = (
        (
            "cortex",
            cortex.read("cortex-mixin/docs/playbooks.md"),
            3,
            cortex_rules(cortex),
            "https://github.com/cortexproject/cortex-jsonnet/blob/main/cortex-mixin/docs/playbooks.md",
            "cortex-mixin's playbooks page, a section an entry, as the memory; its message-only rules as the alerts",
        ),
        (
            "tempo",
            tempo.read("operations/tempo-mixin/runbook.md"),
            2,
            tempo_rules(tempo),
            "https://github.com/grafana/tempo/tree/main/operations/tempo-mixin/runbook.md",
            "tempo-mixin's runbook page, a section an entry, as the memory; its message-only rules as the alerts",
        ),
    )
    for name, page, level, rules, link, about in built:
        n, q = build(name, page, level, rules, link, about)
        answered = sum(1 for r in rules if r.name in page_sections(page, level))
        print(f"{name}: {n} incidents, {q} alerts ({answered} with their own section)")


if __name__ == "__main__":
    main()
