"""Labelled sets for the generalisation protocol (`python -m bench.quality.generalise`): each a memory of incidents
and the alerts looked up in it, with the answers a responder would want, three ways:

- strict: the incident the alert is about (its runbook, the thread a duplicate names, the one labelled);
- lenient: any incident of the same problem family (another report of the same error, a runbook of the
  same rule group);
- facts: of the lenient ones, those that also share the alert's service (a recurrence on the same service
  is the answer a responder wants first); where the alert names no service, the lenient ones.

The shipped sets live in the package (`oncall_memory/evalsets`); the third-party ones are built from public
text by a rule fixed before looking (`bench/quality/sets/runbooks.py`, `postmortems.py`, `github.py`) into a cache
outside the repository: others' writing is read, never committed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oncall_memory.domain.incident import Incident

CACHE = Path(os.environ.get("ONCALL_MEMORY_SETS", Path.home() / ".cache" / "oncall-memory" / "sets"))


@dataclass
class SetQuery:
    """One alert of a set: how to build it (`alert`: Alert fields, or `{"pager": ..., "payload": ...}`), and
    the answers each measure wants. Empty `strict`: nothing on record is the same problem (no-match)."""

    alert: dict[str, Any]
    strict: list[str]
    lenient: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    paraphrase: bool = False  # the right answer says it in other words (few of the alert's words)
    own: str | None = None  # leave-one-out sets: the incident this alert is, left out of its answers
    key: str = ""  # a stable name for reports

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items()}


@dataclass
class EvalSet:
    name: str
    incidents: list[Incident]
    queries: list[SetQuery]
    about: str = ""
    same_problem: str = "strict"  # which measure says "the same problem" (what confidence is calibrated on)

    def measured(self, measure: str) -> list[SetQuery]:
        return [q for q in self.queries if getattr(q, measure)]


def write_set(name: str, incidents: Iterable[Incident], queries: Iterable[SetQuery], about: str) -> Path:
    folder = CACHE / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "incidents.jsonl").write_text(
        "".join(i.model_dump_json(exclude_none=True) + "\n" for i in incidents), encoding="utf-8"
    )
    (folder / "queries.jsonl").write_text("".join(json.dumps(q.as_json()) + "\n" for q in queries), encoding="utf-8")
    (folder / "about.txt").write_text(about, encoding="utf-8")
    return folder


def read_set(name: str, same_problem: str = "strict") -> EvalSet | None:
    """A built third-party set from the cache, or None when it has not been built on this machine."""
    folder = CACHE / name
    if not (folder / "queries.jsonl").exists():
        return None
    incidents = [
        Incident.model_validate_json(line)
        for line in (folder / "incidents.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    queries = [
        SetQuery(**json.loads(line))
        for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    about = (folder / "about.txt").read_text(encoding="utf-8") if (folder / "about.txt").exists() else ""
    return EvalSet(name, incidents, queries, about, same_problem)
