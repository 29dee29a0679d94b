"""A style of its own (issue 82): a product's alert reference as the memory, one short section per alert
("what it means, what to do"), against that product's own generated rules, as terse as they fire: the rule's
name and its expression, nothing more.

    python -m bench.quality.sets.references [--mirrors DIR]

Source (a checkout or a bare mirror under DIR, default /work/.mirror): sourcegraph/docs,
`docs/self-hosted/observability/alerts.mdx`, Sourcegraph's alerts reference, generated from its monitoring
definitions: a section `## <service>: <name>` per alert, a subtitle, its descriptions by level, next steps,
and the query each level's rule runs.

The rule, fixed before any lookup was run:
  - An incident is a section of a service that is not held out: its title the subtitle, its root cause its
    descriptions (the level's badge dropped), its on-call note its next steps less the two lines every section
    carries (the dashboards reference, how to silence it) and code; the alert's name taken out wherever it
    appears (`runbooks.without_name`, and its words `99th percentile search request duration` as written).
  - Held out: every third service in name order (its sections are not in the memory). Its alerts have no
    section of their own: no-match, unless a section of the memory names a metric the alert's query
    selects, then related (lenient: those sections; neither a right answer nor a no-match alert, ruling B of
    issue 82).
  - A query is each section's first rule (its first level), as Alertmanager delivers a generated rule:
    `alertname` `<level>_<service>_<name>` (Sourcegraph's own, as its silence key shows), `summary` that name
    again (the rule carries no other text), labels `level` and `service_name`, `generatorURL` the link
    Prometheus makes to its query (`runbooks.generator_url`).
  - strict: the alert's own section; lenient and facts: it and the sections of its service that select one of
    its metrics.
  - paraphrase: under a third of the words of the alert's name (the level and the service left out) appear in
    its section's incident text.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import re
from dataclasses import dataclass
from pathlib import Path

from bench.mirrors import MIRRORS, tree
from oncall_memory.domain.incident import Incident
from oncall_memory.domain.lexical import terms
from oncall_memory.domain.promql import metric_names

from . import SetQuery, write_set
from .runbooks import _plain, generator_url, without_name

PAGE = "docs/self-hosted/observability/alerts.mdx"
_SECTION = re.compile(r"^## ([\w.-]+): ([\w.-]+)\s*$", re.M)
_SUBTITLE = re.compile(r'<p class="subtitle">(.*?)</p>', re.S)
_BADGE = re.compile(r"<span class=\"badge badge-(\w+)\">\w+</span>\s*")
_QUERY = re.compile(r"Generated query for (\w+) alert: `(.*?)`", re.S)
_BOILERPLATE = re.compile(r"dashboards reference|Silence this alert|silenceAlerts", re.I)


@dataclass
class Section:
    service: str
    name: str
    subtitle: str
    descriptions: list[str]
    steps: list[str]
    level: str
    query: str

    @property
    def key(self) -> str:
        return f"{self.service}:{self.name}"

    @property
    def alertname(self) -> str:
        return f"{self.level}_{self.service}_{self.name}"


def _block(text: str, heading: str) -> str:
    """The text under a bold heading, to the next bold heading, the team's line or the technical details."""
    at = text.find(f"**{heading}**")
    if at < 0:
        return ""
    rest = text[at + len(heading) + 4 :]
    ends = [i for i in (rest.find("\n**"), rest.find("<sub>"), rest.find("<details>")) if i >= 0]
    return rest[: min(ends, default=len(rest))]


def _bullets(block: str) -> list[str]:
    block = re.sub(r"```.*?```", " ", block, flags=re.S)
    out = []
    for line in block.splitlines():
        line = line.strip()
        if line.startswith("- ") and not _BOILERPLATE.search(line):
            out.append(" ".join(_plain(html.unescape(_BADGE.sub("", line[2:]))).split()))
    return [b for b in out if b]


def sections(page: str) -> list[Section]:
    marks = list(_SECTION.finditer(page))
    out = []
    for i, m in enumerate(marks):
        text = page[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(page)]
        query = _QUERY.search(text)
        if query is None:
            continue
        subtitle = _SUBTITLE.search(text)
        descriptions = _bullets(_block(text, "Descriptions"))
        steps = _bullets(_block(text, "Next steps"))
        out.append(
            Section(
                m.group(1),
                m.group(2),
                html.unescape(subtitle.group(1)).strip() if subtitle else "",
                descriptions,
                steps,
                query.group(1),
                html.unescape(query.group(2)),
            )
        )
    return out


def incident(s: Section) -> Incident | None:
    spoken = s.name.replace("_", " ")

    def clean(text: str) -> str:
        return " ".join(without_name(without_name(text, s.name), spoken).split())

    title = clean(s.subtitle) or clean(s.descriptions[0] if s.descriptions else "")
    if not title:
        return None
    cause = clean(" ".join(s.descriptions))
    note = clean(" ".join(s.steps))[:4000]
    return Incident(
        id=f"sourcegraph:{s.key}",
        title=title[:200],
        root_cause=cause or None,
        oncall_note=note or None,
        service=s.service,
        source="runbook",
    )


def payload(s: Section) -> dict:
    """The generated rule's alert as Alertmanager posts it: its name, and its name again as its summary."""
    labels = {"alertname": s.alertname, "level": s.level, "service_name": s.service}
    alert = {
        "status": "firing",
        "labels": labels,
        "annotations": {"summary": s.alertname},
        "startsAt": "2026-11-01T03:12:00Z",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": generator_url("http://prometheus:9090", s.query),
        "fingerprint": hashlib.sha256(s.alertname.encode()).hexdigest()[:16],
    }
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{s.alertname}"}}',
        "status": "firing",
        "receiver": "oncall-memory",
        "groupLabels": {"alertname": s.alertname},
        "commonLabels": labels,
        "alerts": [alert],
    }


def is_paraphrase(s: Section, found: Incident) -> bool:
    words = set(terms(s.name.replace("_", " "))) - {s.service}
    text = set(terms(" ".join(filter(None, (found.title, found.root_cause, found.oncall_note)))))
    return bool(words) and len(words & text) / len(words) < 1 / 3


def build(mirrors: Path) -> tuple[int, int, int, int]:
    every = sections(tree(mirrors, "sourcegraph/docs").read(PAGE))
    services = sorted({s.service for s in every})
    held_out = set(services[2::3])
    memory: dict[str, Incident] = {}
    for s in every:
        if s.service not in held_out and (found := incident(s)) is not None:
            memory[s.key] = found
    metrics = {s.key: set(metric_names(s.query)) for s in every}
    queries, none, related = [], 0, 0
    for i, s in enumerate(every):
        own = memory.get(s.key)
        if own is not None:
            family = sorted(
                memory[o.key].id
                for o in every
                if o.key in memory and o.service == s.service and metrics[o.key] & metrics[s.key]
            )
            strict = [own.id]
        else:
            family = sorted(memory[o.key].id for o in every if o.key in memory and metrics[o.key] & metrics[s.key])
            strict = []
            related += bool(family)
            none += not family
        queries.append(
            SetQuery(
                alert={"pager": "alertmanager", "payload": payload(s)},
                strict=strict,
                lenient=family or strict,
                facts=family or strict,
                paraphrase=own is not None and is_paraphrase(s, own),
                key=f"{s.alertname}#{i}",
            )
        )
    about = "Sourcegraph's alerts reference, a section an entry, as the memory; its generated rules, name only, as the alerts"
    write_set("sourcegraph", memory.values(), queries, about)
    return len(memory), len(queries), none, related


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    args = ap.parse_args()
    n, q, none, related = build(args.mirrors)
    print(f"sourcegraph: {n} incidents, {q} alerts ({none} with nothing on record, {related} related)")


if __name__ == "__main__":
    main()
