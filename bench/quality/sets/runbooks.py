"""Two sets from public runbooks, with alerts rendered from public Prometheus rules (issue 32).

    python -m bench.quality.sets.runbooks [--mirrors DIR]

Sources (public repositories, read from a checkout or a bare mirror under DIR, default /work/.mirror as
this workplace's `fetch` leaves them; `git clone` elsewhere):
  - prometheus-operator/kube-prometheus: `manifests/*prometheusRule.yaml`, the alerts (the queries);
  - prometheus-operator/runbooks: `content/runbooks/<group>/<Alert>.md`, one memory;
  - openshift/runbooks: `alerts/<operator>/<Alert>.md`, another memory, by other authors.

The rule, fixed before any lookup was run:
  - An incident is one runbook: its title the first sentence of "Meaning", its root cause the first
    paragraph of "Impact", its on-call note the first paragraph of "Mitigation" (else "Diagnosis"); code
    blocks, HTML and link targets dropped; the alert's own name (`KubeJobFailed`, "Kube Job Failed") removed
    wherever it appears, so nothing matches on the name alone: a team's incident is titled by what broke.
  - A query is each kube-prometheus alert rule, rendered as Alertmanager sends it (webhook v4): labels
    `alertname`, `severity`, the labels its description names and the `job` its expression selects, filled
    with one fixed set of sample values (a namespace `payments`, a pod `ledger-7c9f8d6b54-x2kq9`, a cluster
    `prod-eu1`, ...); `{{ $value }}` as a sample number; its `generatorURL` the link Prometheus makes to the
    rule's expression (`/graph?g0.expr=...&g0.tab=1`; added 2026-12-06, a bare `/graph` before).
  - strict: the memory's runbook for that alert name; none: no runbook of that alert. lenient: the
    memory's runbooks for every alert of the same rule group (`kubernetes-apps`, `node-exporter`, ...), also
    for an alert without its own (something close is on record); none: nothing close is. facts: the lenient
    ones (runbooks name no service).
  - paraphrase: under a third of the alert's words (its summary and description, sample values and name
    left out) appear in the right runbook's incident text.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote_plus

import yaml

from bench.mirrors import MIRRORS, Tree, tree
from oncall_memory.domain.incident import Incident
from oncall_memory.domain.lexical import terms

from . import SetQuery, write_set

SAMPLE = {
    "namespace": "payments",
    "pod": "ledger-7c9f8d6b54-x2kq9",
    "container": "ledger",
    "cluster": "prod-eu1",
    "node": "ip-10-0-3-7.eu-west-1.compute.internal",
    "instance": "10.0.3.7:9100",
    "device": "/dev/nvme0n1p1",
    "mountpoint": "/var/lib/kubelet",
    "deployment": "ledger",
    "statefulset": "ledger-db",
    "daemonset": "fluent-bit",
    "persistentvolumeclaim": "data-ledger-db-0",
    "persistentvolume": "pvc-1f2e3d4c",
    "job_name": "ledger-nightly-settlement-29123",
    "horizontalpodautoscaler": "ledger",
    "poddisruptionbudget": "ledger-pdb",
    "resource": "cpu",
    "phase": "Pending",
    "name": "ledger",
    "interface": "eth0",
    "alertmanager": "alertmanager-main",
    "integration": "slack",
    "mechanism": "kubernetes",
    "scrape_job": "payments/ledger",
    "controller": "ledger",
    "service": "ledger",
    "version": "v1.29.4",
    "eviction_signal": "memory.available",
    "condition": "MemoryPressure",
    "reason": "Error",
}
VALUES = {"humanizePercentage": "87.5%", "humanizeDuration": "2h 13m", "humanize": "42"}


# -- runbooks as incidents ---------------------------------------------------------------------------------

_FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE = re.compile(r"```.*?```", re.S)
_DETAILS = re.compile(r"<details>.*?</details>", re.S | re.I)
_HTML = re.compile(r"<[^>]+>")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|\[([^\]]*)\]\[[^\]]*\]")
_REFDEF = re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$", re.M)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def _plain(markdown: str) -> str:
    text = _FENCE.sub(" ", _DETAILS.sub(" ", markdown))
    text = _REFDEF.sub(" ", _LINK.sub(lambda m: m.group(1) or m.group(2) or "", text))
    text = _HTML.sub(" ", text).replace("`", "").replace("**", "").replace("__", "")
    return text


def sections(markdown: str) -> dict[str, str]:
    body = _FRONT.sub("", markdown)
    out: dict[str, str] = {}
    for part in re.split(r"^##\s+", body, flags=re.M)[1:]:
        heading, _, rest = part.partition("\n")
        out[heading.strip().lower()] = rest
    return out


def first_paragraph(markdown: str, limit: int = 300) -> str:
    for block in re.split(r"\n\s*\n", _plain(markdown)):
        line = " ".join(block.replace("- ", " ").replace("* ", " ").split())
        if len(line) > 3:
            return line[:limit]
    return ""


def spaced(name: str) -> str:
    """KubePodCrashLooping -> Kube Pod Crash Looping (the runbooks' front-matter titles)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)


def without_name(text: str, name: str) -> str:
    for form in (name, spaced(name)):
        text = re.sub(rf"\b{re.escape(form)}\b", "", text, flags=re.I)
    return " ".join(text.replace("The  alert", "The alert").split())


def runbook_incident(source: str, name: str, markdown: str) -> Incident | None:
    parts = sections(markdown)
    meaning = without_name(first_paragraph(parts.get("meaning", ""), 600), name)
    if not meaning:
        return None
    title = _SENTENCE.split(meaning, maxsplit=1)[0][:200]
    impact = without_name(first_paragraph(parts.get("impact", "")), name)
    note = without_name(
        first_paragraph(parts.get("mitigation", "")) or first_paragraph(parts.get("diagnosis", "")), name
    )
    return Incident(
        id=f"{source}:{name}", title=title, root_cause=impact or None, oncall_note=note or None, source="runbook"
    )


def runbooks(t: Tree, under: str, source: str) -> dict[str, Incident]:
    out = {}
    for path in t.files(under):
        name = Path(path).stem
        if not path.endswith(".md") or name.startswith("_") or name.lower() in {"readme", "example"}:
            continue
        if "/helpers/" in path or "/hierarchy/" in path:
            continue
        incident = runbook_incident(source, name, t.read(path))
        if incident:
            out[name] = incident
    return out


# -- alert rules as Alertmanager alerts --------------------------------------------------------------------


@dataclass
class Rule:
    name: str
    group: str
    severity: str
    summary: str
    description: str
    expr: str


def rules(t: Tree) -> list[Rule]:
    out = []
    for path in t.files("manifests"):
        if not path.endswith("prometheusRule.yaml") or "/setup/" in path:
            continue
        doc = yaml.safe_load(t.read(path))
        for group in doc["spec"]["groups"]:
            for r in group["rules"]:
                if "alert" not in r:
                    continue
                notes = r.get("annotations", {})
                out.append(
                    Rule(
                        r["alert"],
                        group["name"],
                        r.get("labels", {}).get("severity", "warning"),
                        notes.get("summary", ""),
                        notes.get("description", notes.get("message", "")),
                        r.get("expr", ""),
                    )
                )
    return out


_WITH = re.compile(r"\{\{-?\s*with\s+\$labels\.(\w+)\s*-?\}\}(.*?)\{\{-?\s*end\s*-?\}\}", re.S)
_LABEL = re.compile(r"\{\{-?\s*\$labels\.(\w+)\s*-?\}\}")
_VALUE = re.compile(r"\{\{-?\s*(?:printf\s+\"[^\"]*\"\s+)?(?:\$value|\"[^\"]*\")\s*(?:\|\s*(\w+))?\s*-?\}\}")
_ANY = re.compile(r"\{\{.*?\}\}")


def sample_labels(rule: Rule) -> dict[str, str]:
    text = f"{rule.summary} {rule.description}"
    names = set(_LABEL.findall(text)) | {m.group(1) for m in _WITH.finditer(text)}
    labels = {"alertname": rule.name, "severity": rule.severity}
    for selected in ("job", "reason", "condition", "phase", "resource"):
        if m := re.search(rf'\b{selected}="([^"]+)"', rule.expr):
            labels[selected] = m.group(1)
    for name in sorted(names):
        labels.setdefault(name, SAMPLE.get(name, "example"))
    return labels


def render(template: str, labels: dict[str, str]) -> str:
    text = _WITH.sub(lambda m: m.group(2).replace("{{ . }}", labels.get(m.group(1), "")), template)
    text = _LABEL.sub(lambda m: labels.get(m.group(1), SAMPLE.get(m.group(1), "example")), text)
    text = _VALUE.sub(lambda m: VALUES.get(m.group(1) or "", "42"), text)
    return " ".join(_ANY.sub("", text).split())


def generator_url(prometheus: str, expr: str) -> str:
    """The link to the rule's expression a Prometheus ruler sends as an alert's `generatorURL`: its external
    URL and `/graph?g0.expr=<expr>&g0.tab=1`, the expression escaped as Go's `url.QueryEscape` does
    (Prometheus' `strutil.TableLinkForExpression`)."""
    if not expr:
        return f"{prometheus}/graph"
    # Prometheus links the expression as it prints it back, on one line; a rule file's block keeps its breaks.
    return f"{prometheus}/graph?g0.expr={quote_plus(' '.join(expr.split()))}&g0.tab=1"


def alertmanager_payload(rule: Rule) -> dict:
    labels = sample_labels(rule)
    annotations = {"summary": render(rule.summary, labels), "description": render(rule.description, labels)}
    alert = {
        "status": "firing",
        "labels": labels,
        "annotations": {k: v for k, v in annotations.items() if v},
        "startsAt": "2026-11-01T03:12:00Z",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": generator_url("http://prometheus-k8s.monitoring:9090", rule.expr),
        "fingerprint": hashlib.sha256(f"{rule.name}{rule.description}".encode()).hexdigest()[:16],
    }
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{rule.name}"}}',
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": "oncall-memory",
        "groupLabels": {"alertname": rule.name},
        "commonLabels": labels,
        "commonAnnotations": alert["annotations"],
        "externalURL": "http://alertmanager-main.monitoring:9093",
        "alerts": [alert],
    }


def is_paraphrase(rule: Rule, incident: Incident) -> bool:
    labels = sample_labels(rule)
    said = render(f"{rule.summary} {rule.description}", labels)
    noise = set(terms(" ".join(labels.values()))) | set(terms(spaced(rule.name)))
    words = set(terms(said)) - noise
    text = set(terms(" ".join(filter(None, (incident.title, incident.root_cause, incident.oncall_note)))))
    return bool(words) and len(words & text) / len(words) < 1 / 3


def build(mirrors: Path, memory: dict[str, Incident], name: str, about: str) -> tuple[int, int]:
    all_rules = rules(tree(mirrors, "prometheus-operator/kube-prometheus"))
    groups: dict[str, set[str]] = {}
    for r in all_rules:
        groups.setdefault(r.group, set()).add(r.name)
    queries = []
    for i, r in enumerate(all_rules):
        right = memory.get(r.name)
        family = sorted(memory[n].id for n in groups[r.group] if n in memory)
        queries.append(
            SetQuery(
                alert={"pager": "alertmanager", "payload": alertmanager_payload(r)},
                strict=[right.id] if right else [],
                lenient=family,
                facts=family,
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
    po = runbooks(tree(args.mirrors, "prometheus-operator/runbooks"), "content/runbooks", "prometheus-operator")
    os_ = runbooks(tree(args.mirrors, "openshift/runbooks"), "alerts", "openshift")
    for name, memory, about in (
        ("runbooks", po, "prometheus-operator/runbooks as the memory, kube-prometheus rules as the alerts"),
        ("openshift", os_, "openshift/runbooks as the memory, kube-prometheus rules as the alerts"),
    ):
        n, q = build(args.mirrors, memory, name, about)
        print(f"{name}: {n} incidents, {q} alerts")


if __name__ == "__main__":
    main()
