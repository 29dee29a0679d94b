"""Evaluation harness: how well does the memory answer labelled queries, per retrieval configuration?

A team runs it on its own history to choose an embedding model and ranking weights with figures,
not feelings. Two kinds of labelled query: an alert written out (text and the facts a pager would carry,
`oncall_memory/evalsets/labels.jsonl`), and an alert exactly as a pager sends it (`{"pager": "alertmanager" |
"pagerduty" | "opsgenie", "payload": ...}`, `oncall_memory/evalsets/alerts.jsonl`), whose facts must be found the
way the service finds them. Beside the configurations, BM25 over the same stored texts: the word search
anyone could run without this product, which each configuration has to beat to earn its place.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError, field_validator

from .answer.bm25 import BM25
from .answer.feedback import FeedbackStore
from .domain import payload as P
from .domain.alert import Alert, Filters
from .domain.conditions import holds
from .domain.distill import distill_alert
from .domain.facts import Facts, Redacted
from .domain.rejected import validation_message
from .errors import InvalidInput
from .memory import Memory
from .store.engines import Mode

BASELINE = "BM25"  # the row of the word-search baseline
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

    pager: str  # the integration whose webhook sends it (`alertmanager`, `pagerduty`, `opsgenie`)
    payload: dict[str, Any]
    filters: Filters | None = None
    relevant: list[str]

    @field_validator("pager")
    @classmethod
    def _a_pager_we_have(cls, pager: str) -> str:
        if _webhook(pager) is None:
            raise ValueError(f"no built-in pager {pager!r}: use one of {', '.join(h.name for h in _webhooks())}")
        return pager

    def alert(self, memory: Memory, *, with_facts: bool = True) -> Alert:
        """The alert the service would look up for this payload (the first firing alert of a group), read by
        the pager's own webhook, through the hook the service mounts it by."""
        hook = _webhook(self.pager)
        assert hook is not None  # the validator saw to it
        known = memory.known_values()
        jobs, _ = hook.jobs(self.payload, memory.settings, known)
        alert = hook.read(jobs[0], memory.settings, known).items[0].alert  # a large group is claimed unread
        return alert if with_facts else Alert(text=alert.text, metrics=alert.metrics)


def _webhooks() -> list[Any]:
    from .integrations.offers import built_in_webhooks

    return built_in_webhooks()


def _webhook(pager: str) -> Any:
    return next((hook for hook in _webhooks() if hook.name == pager), None)


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
        queries.append(query)  # an empty `relevant`: an alert nothing on record matches (the abstention set)
    if not queries:
        raise InvalidInput(f"{path} holds no labelled queries")
    return queries


def metrics(ranked: Sequence[Sequence[str]], relevant: Sequence[Sequence[str]]) -> Scores:
    """Mean recall@3, recall@5, hit@1 and MRR of ranked id lists against their relevant sets (queries with
    nothing relevant, the no-match ones, are left out: they are scored by `abstention`)."""
    pairs = [(ids, rel) for ids, rel in zip(ranked, relevant, strict=True) if rel]
    if not pairs:
        return Scores(0.0, 0.0, 0.0, 0.0)
    ranked, relevant = [p[0] for p in pairs], [p[1] for p in pairs]
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
    queries: Sequence[Query],
    *,
    configurations: Sequence[Configuration] = CONFIGURATIONS,
    with_facts: bool = True,
    now: datetime | None = None,
    baseline: bool = True,
) -> dict[str, Scores]:
    """Run every query through the real retriever under each configuration; with `baseline`, first through
    Okapi BM25 over the same stored texts (`BASELINE`: the textbook word search every configuration should
    beat; it honours the queries' hard filters and reads no facts).

    Without `with_facts` the alerts carry their text only: what ranking adds when a pager sends no labels.
    """
    results = {}
    if baseline:
        results[BASELINE] = metrics(bm25_ranked(memory, queries), [q.relevant for q in queries])
    for config in configurations:
        ranked = [
            [
                n.id
                for n in memory.similar(
                    q.alert(memory, with_facts=with_facts),
                    filters=q.filters,
                    limit=DEPTH,
                    mode=config.mode,
                    rank=config.rank,
                    now=now,
                ).neighbours
            ]
            for q in queries
        ]
        results[config.name] = metrics(ranked, [q.relevant for q in queries])
    return results


def bm25_ranked(memory: Memory, queries: Sequence[Query]) -> list[list[str]]:
    """Each query's alert text (distilled as a lookup distills it) ranked by BM25 over the stored texts,
    leaving out the incidents its hard filters exclude."""
    payloads = memory.payloads()
    bm25 = BM25({key: p.get(P.TEXT) or "" for key, p in payloads.items()})
    ranked = []
    for q in queries:
        where = q.filters.conditions() if q.filters else []
        excluded = [key for key, p in payloads.items() if not holds(where, p)] if where else []
        text = distill_alert(q.alert(memory, with_facts=False).text)
        ranked.append(bm25.ranked(text, limit=DEPTH, without=excluded))
    return ranked


@dataclass(frozen=True)
class Abstention:
    """Does the answer say when it is a guess? Under hybrid+ranking: of the alerts nothing on record
    matches, how many were answered with low confidence (should be most); of the right first answers, how
    many were marked low (should be few)."""

    no_match: int
    no_match_low: int
    right_first: int
    right_first_low: int

    @property
    def no_match_low_share(self) -> float:
        return self.no_match_low / self.no_match if self.no_match else 0.0

    @property
    def right_first_low_share(self) -> float:
        return self.right_first_low / self.right_first if self.right_first else 0.0

    def __add__(self, other: Abstention) -> Abstention:
        return Abstention(
            self.no_match + other.no_match,
            self.no_match_low + other.no_match_low,
            self.right_first + other.right_first,
            self.right_first_low + other.right_first_low,
        )

    def line(self) -> str:
        parts = []
        if self.no_match:
            parts.append(
                f"no-match alerts marked low {self.no_match_low}/{self.no_match} ({self.no_match_low_share:.0%})"
            )
        if self.right_first:
            parts.append(
                f"right first answers marked low {self.right_first_low}/{self.right_first} "
                f"({self.right_first_low_share:.0%})"
            )
        return "abstention: " + "; ".join(parts) if parts else "abstention: nothing to score"


def abstention(
    memory: Memory, queries: Sequence[Query], *, with_facts: bool = True, now: datetime | None = None
) -> Abstention:
    counts = Abstention(0, 0, 0, 0)
    for q in queries:
        lookup = memory.similar(q.alert(memory, with_facts=with_facts), filters=q.filters, limit=DEPTH, now=now)
        low = lookup.confidence == "low"
        if not q.relevant:
            counts += Abstention(1, int(low), 0, 0)
        elif lookup.neighbours and lookup.neighbours[0].id in q.relevant:
            counts += Abstention(0, 0, 1, int(lookup.neighbours[0].confidence == "low"))
    return counts


def format_table(results: dict[str, Scores], queries: Sequence[Query], stood: Abstention | None = None) -> str:
    matched = sum(1 for q in queries if q.relevant)
    lines = [
        f"{matched} labelled queries"
        + (f", {len(queries) - matched} with no match on record" if matched < len(queries) else "")
    ]
    if matched:
        lines.append(f"{'configuration':<16} {'recall@3':>9} {'recall@5':>9} {'hit@1':>7} {'MRR':>7}")
        for name, s in results.items():
            lines.append(f"{name:<16} {s.recall_at_3:>9.3f} {s.recall_at_5:>9.3f} {s.hit_at_1:>7.3f} {s.mrr:>7.3f}")
    if stood is not None:
        lines.append(stood.line())
    return "\n".join(lines)


def as_json(results: dict[str, Scores], stood: Abstention | None = None) -> str:
    body: dict[str, object] = {name: vars(s) for name, s in results.items()}
    if stood is not None:
        body["abstention"] = {
            **vars(stood),
            "no_match_low_share": round(stood.no_match_low_share, 3),
            "right_first_low_share": round(stood.right_first_low_share, 3),
        }
    return json.dumps(body, indent=2)


@dataclass(frozen=True)
class Replay:
    """What responders' feedback does: feedback is given on half the queries (a simulated responder marks
    the relevant incidents in the top 5 "helped" and the irrelevant ones above them "not related"), then
    hybrid+ranking is scored on the other half (new alerts) and on the same half again (the same alerts
    firing again), before and after."""

    held_out_before: Scores
    held_out_after: Scores
    repeated_before: Scores
    repeated_after: Scores
    verdicts: int


@contextmanager
def scratch_feedback(memory: Memory) -> Iterator[FeedbackStore]:
    """Inside, the memory's feedback goes to an in-memory store that is dropped afterwards: the replay's verdicts
    leave the team's own as they were."""
    real, memory.feedback = memory.feedback, FeedbackStore(":memory:")
    try:
        yield memory.feedback
    finally:
        memory.feedback.close()
        memory.feedback = real


def replay_feedback(memory: Memory, queries: Sequence[Query], *, now: datetime | None = None) -> Replay:
    """Run the replay on a scratch feedback store: the memory's own feedback is left as it was."""
    given, held = list(queries[0::2]), list(queries[1::2])
    ranked = Configuration("hybrid+ranking", "hybrid", True)

    def score_of(qs: Sequence[Query]) -> Scores:
        return evaluate(memory, qs, configurations=[ranked], now=now)[ranked.name]

    with scratch_feedback(memory):
        held_before, repeated_before = score_of(held), score_of(given)
        verdicts = 0
        for q in given:
            alert = q.alert(memory)
            shown = memory.similar(alert, filters=q.filters, limit=5, now=now).neighbours
            first_relevant = next((i for i, n in enumerate(shown) if n.id in q.relevant), len(shown))
            for i, n in enumerate(shown):
                verdict = "helped" if n.id in q.relevant else ("not related" if i < first_relevant else None)
                if verdict:
                    memory.record_feedback(alert, n.id, verdict, who="replay", ref="eval")
                    verdicts += 1
        return Replay(held_before, score_of(held), repeated_before, score_of(given), verdicts)


def format_replay(replay: Replay) -> str:
    rows = [
        ("new alerts (held out)", replay.held_out_before, replay.held_out_after),
        ("the same alerts again", replay.repeated_before, replay.repeated_after),
    ]
    lines = [
        f"feedback replay: {replay.verdicts} verdicts given; hybrid+ranking before -> after",
        f"{'queries':<24} {'recall@3':>17} {'hit@1':>15} {'MRR':>15}",
    ]
    for name, before, after in rows:
        lines.append(
            f"{name:<24} {before.recall_at_3:>7.3f} -> {after.recall_at_3:.3f} {before.hit_at_1:>5.3f} -> "
            f"{after.hit_at_1:.3f} {before.mrr:>5.3f} -> {after.mrr:.3f}"
        )
    return "\n".join(lines)
