"""Evaluation harness: how well does the memory answer labelled queries, per retrieval configuration?

A team runs it on its own history to choose an embedding model and ranking weights with figures,
not feelings. Two kinds of labelled query: an alert written out (text and the facts a pager would carry,
`fixtures/eval/labels.jsonl`), and an alert exactly as a pager sends it (`{"pager": "alertmanager" |
"pagerduty" | "opsgenie", "payload": ...}`, `fixtures/eval/alerts.jsonl`), whose facts must be found the
way the service finds them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from . import pagers
from .alert import Alert, Filters
from .backlog import validation_message
from .errors import InvalidInput
from .facts import Facts, Redacted
from .memory import Memory
from .stores import Mode

DEPTH = 10  # neighbours fetched per query; MRR counts a first relevant hit within this depth


class LabelledQuery(Facts):
    """An alert (text and facts), optional hard filters, and the incidents a responder would want."""

    text: str
    signature: str | None = None
    filters: Filters | None = None
    relevant: list[str]

    def alert(self, memory: Memory, *, with_facts: bool = True) -> Alert:
        fields = set(Alert.model_fields) if with_facts else {"text"}
        return Alert.model_validate(self.model_dump(include=fields))


class PagerQuery(Redacted):
    """An alert as a pager sends it, and the incidents a responder would want."""

    pager: Literal["alertmanager", "pagerduty", "opsgenie"]
    payload: dict[str, Any]
    filters: Filters | None = None
    relevant: list[str]

    def alert(self, memory: Memory, *, with_facts: bool = True) -> Alert:
        """The alert the service would look up for this payload (the first firing alert of a group)."""
        if self.pager == "alertmanager":
            hook = pagers.AlertmanagerWebhook.model_validate(self.payload)
            alert = next(a for a in (pagers.alertmanager_alert(x, memory.settings.label_facts, memory.known_values())
                                     for x in hook.alerts if x.status == "firing") if a)
        elif self.pager == "pagerduty":
            incident = pagers.PDIncident.model_validate(pagers.PagerDutyWebhook.model_validate(self.payload).event.data)
            alert = pagers.pagerduty_alert(incident, memory.known_values())
        else:
            alert = pagers.opsgenie_alert(pagers.OpsgenieWebhook.model_validate(self.payload).alert,
                                          memory.settings.label_facts, memory.known_values())
        return alert if with_facts else Alert(text=alert.text)


@dataclass(frozen=True)
class Configuration:
    name: str
    mode: Mode
    rank: bool


CONFIGURATIONS = (
    Configuration("dense-only", "dense", False),
    Configuration("lexical-only", "lexical", False),
    Configuration("hybrid", "hybrid", False),
    Configuration("hybrid+ranking", "hybrid", True),
)


@dataclass(frozen=True)
class Scores:
    recall_at_3: float
    recall_at_5: float
    hit_at_1: float
    mrr: float


Query = LabelledQuery | PagerQuery


def read_labels(path: Path) -> list[Query]:
    """Every labelled query in `path`. Raises `InvalidInput` naming the first bad line."""
    queries = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidInput(f"cannot read labels {path}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            query = (PagerQuery if isinstance(data, dict) and "pager" in data else LabelledQuery).model_validate(data)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        except ValidationError as exc:
            raise InvalidInput(f"{path}:{number}: {validation_message(exc)}") from exc
        if not query.relevant:
            raise InvalidInput(f"{path}:{number}: relevant is empty: list the incident ids a responder would want")
        queries.append(query)
    if not queries:
        raise InvalidInput(f"{path} holds no labelled queries")
    return queries


def metrics(ranked: Sequence[Sequence[str]], relevant: Sequence[Sequence[str]]) -> Scores:
    """Mean recall@3, recall@5, hit@1 and MRR of ranked id lists against their relevant sets."""
    r3 = r5 = h1 = rr = 0.0
    for ids, rel in zip(ranked, relevant, strict=True):
        rel_set = set(rel)
        r3 += len(rel_set & set(ids[:3])) / len(rel_set)
        r5 += len(rel_set & set(ids[:5])) / len(rel_set)
        h1 += 1.0 if ids[:1] and ids[0] in rel_set else 0.0
        rr += next((1.0 / rank for rank, i in enumerate(ids, start=1) if i in rel_set), 0.0)
    n = len(ranked)
    return Scores(r3 / n, r5 / n, h1 / n, rr / n)


def evaluate(
    memory: Memory,
    queries: Sequence[LabelledQuery],
    *,
    configurations: Sequence[Configuration] = CONFIGURATIONS,
    with_facts: bool = True,
    now: datetime | None = None,
) -> dict[str, Scores]:
    """Run every query through the real retriever under each configuration.

    Without `with_facts` the alerts carry their text only: what ranking adds when a pager sends no labels.
    """
    results = {}
    for config in configurations:
        ranked = [
            [
                n.id
                for n in memory.similar(
                    q.alert(memory, with_facts=with_facts), filters=q.filters, limit=DEPTH, mode=config.mode, rank=config.rank, now=now
                ).neighbours
            ]
            for q in queries
        ]
        results[config.name] = metrics(ranked, [q.relevant for q in queries])
    return results


def format_table(results: dict[str, Scores], queries: int) -> str:
    lines = [
        f"{queries} labelled queries",
        f"{'configuration':<16} {'recall@3':>9} {'recall@5':>9} {'hit@1':>7} {'MRR':>7}",
    ]
    for name, s in results.items():
        lines.append(f"{name:<16} {s.recall_at_3:>9.3f} {s.recall_at_5:>9.3f} {s.hit_at_1:>7.3f} {s.mrr:>7.3f}")
    return "\n".join(lines)


def as_json(results: dict[str, Scores]) -> str:
    return json.dumps({name: vars(s) for name, s in results.items()}, indent=2)
