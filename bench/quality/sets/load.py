"""Every set the protocol knows, loaded: the shipped ones always, the third-party ones where built here."""

from __future__ import annotations

import json
from pathlib import Path

from oncall_memory.domain.distill import distill
from oncall_memory.domain.incident import Incident
from oncall_memory.sources.jsonl_files import read_jsonl

from . import EvalSet, SetQuery, read_set

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "oncall_memory" / "evalsets"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# The sample backlog's problem families: it was written in blocks, one problem each (crash loops on start,
# readiness, OOM kills, DNS, certificates, VPN tunnels, full disks, database connections, quotas, consumer
# lag, nodes NotReady, image pulls, CPU throttling).
FAMILY_STARTS = (1001, 1006, 1010, 1015, 1020, 1025, 1030, 1035, 1040, 1045, 1050, 1055, 1060, 1065)


def family(incident_id: str) -> int:
    number = int(incident_id.removeprefix("INC-"))
    return next(i for i, start in enumerate(FAMILY_STARTS[1:]) if number < start)


def shipped() -> list[EvalSet]:
    """The two shipped sets over the sample backlog, each with the no-match alerts of its kind (the pager
    set the Alertmanager ones, the written-out set the written ones); lenient: any incident of the right
    answers' families; facts: of those, the alert's service. And `again`: each sample incident fired again
    (as the incident page asks), looked up among the others: its family is the answer, and its own service's
    other problems are the trap."""
    incidents = [i for i in read_jsonl(ROOT / "fixtures" / "incidents.jsonl") if isinstance(i, Incident)]
    by_family: dict[int, list[Incident]] = {}
    for i in incidents:
        by_family.setdefault(family(i.id), []).append(i)
    nomatch = _lines(SHIPPED / "nomatch.jsonl")
    out = []
    for name, file, kind in (("pager", "alerts.jsonl", True), ("written", "labels.jsonl", False)):
        queries = []
        for n, row in enumerate([*_lines(SHIPPED / file), *(r for r in nomatch if ("pager" in r) == kind)]):
            relevant = row.pop("relevant")
            same = sorted({i.id for r in relevant for i in by_family[family(r)]} | set(relevant))
            services = {i.service for i in incidents if i.id in relevant}
            own = sorted({i for i in same if next(x for x in incidents if x.id == i).service in services})
            queries.append(SetQuery(alert=row, strict=relevant, lenient=same, facts=own, key=f"{name}#{n}"))
        out.append(EvalSet(name, incidents, queries, f"shipped: {file} and its no-match alerts"))
    again = []
    for i in incidents:
        same = sorted(o.id for o in by_family[family(i.id)] if o.id != i.id)
        fields = {"text": distill(i), "service": i.service, "env": i.env, "flavor": i.flavor}
        alert = {k: v for k, v in fields.items() if v} | {"component_tags": i.component_tags}
        own = [o for o in same if next(x for x in incidents if x.id == o).service == i.service]
        again.append(SetQuery(alert=alert, strict=[], lenient=same, facts=own or same, own=i.id, key=i.id))
    out.append(EvalSet("again", incidents, again, "each sample incident fired again", same_problem="lenient"))
    return out


def github() -> EvalSet | None:
    """bench.quality.github_issues' set where its texts are on this machine: each issue an incident (its repository
    as the service) and, in turn, the alert looked up among the others."""
    from bench.quality.github_issues import DEFAULT_TEXTS, issue_id, joined, read_labels, relevant_sets

    if not DEFAULT_TEXTS.exists():
        return None
    labels = read_labels()
    texts = {t["url"]: t for t in _lines(DEFAULT_TEXTS)}
    labels = [label for label in labels if label["url"] in texts]
    issues = joined(labels, list(texts.values()))
    strict, lenient = relevant_sets(issues)
    incidents, queries = [], []
    for issue, s, n in zip(issues, strict, lenient):
        key = issue_id(issue["url"])
        repo = key.split("#")[0]
        incidents.append(
            Incident(
                id=key, title=issue["title"], error_signature=issue["body"] or None, url=issue["url"], service=repo
            )
        )
        same_repo = [i for i in n if i.split("#")[0] == repo]
        queries.append(
            SetQuery(
                alert={"text": f"{issue['title']}\n{issue['body']}", "service": repo},
                strict=s,
                lenient=n,
                facts=same_repo or n,
                own=key,
                key=key,
            )
        )
    return EvalSet("github", incidents, queries, "public GitHub issues, families by problem", same_problem="lenient")


# Each set's style: who wrote the alerts and who wrote the memory. The protocol leaves a style out whole (its
# sets share a writer, so one of them is not news to a fit on the others).
STYLES = {
    "pager": "pager alerts vs incidents",
    "written": "pager alerts vs incidents",
    "again": "pager alerts vs incidents",
    "runbooks": "alert rules vs runbooks",
    "openshift": "alert rules vs runbooks",
    "sourcegraph": "a product's generated rules vs its alert reference",
    "cortex": "message rules vs a runbook page",
    "tempo": "message rules vs a runbook page",
    "postmortems": "post-mortems",
    "github": "issues",
}
# How to build each third-party set on a machine that has not.
HOW = {
    "github": "its texts: python -m bench.quality.github_issues --fetch",
    "runbooks": "python -m bench.quality.sets.runbooks",
    "openshift": "python -m bench.quality.sets.runbooks",
    "sourcegraph": "python -m bench.quality.sets.references",
    "cortex": "python -m bench.quality.sets.playbooks",
    "tempo": "python -m bench.quality.sets.playbooks",
    "postmortems": "python -m bench.quality.sets.postmortems",
}


def every_set() -> tuple[list[EvalSet], list[str]]:
    """The sets that can be run here, and a line for each that cannot (not built on this machine)."""
    sets, missing = shipped(), []
    for name in HOW:
        found = github() if name == "github" else read_set(name, "lenient" if name == "postmortems" else "strict")
        if found:
            sets.append(found)
        else:
            missing.append(f"{name}: not built on this machine ({HOW[name]})")
    return sets, missing
