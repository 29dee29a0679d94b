"""Rank candidates by the facts in their payload, and say why, in words a tired human reads at 3 a.m.

Meaning gets a candidate into the list; facts order it. Each fact that moves a candidate is a typed
`Boost` (kind, weight, text): the score is relevance plus the weights, the reasons are the texts, so
the order and its explanation cannot drift apart. Kinds with weight 0 only explain.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from . import payload as P
from .facts import Facts
from .incident import worked
from .settings import RankingWeights
from .vocabulary import BY_KEY

# Boost kinds, in the order their reasons are read.
SIGNATURE, MEANING, SYMPTOM, FLAVOR, ENV, SERVICE, TAGS, FIXED, NO_EFFECT, WORSE, AGE = (
    "signature", "meaning", "symptom", "flavor", "env", "service", "tags", "fixed", "no_effect", "worse", "age")
FIX_KINDS = frozenset({FIXED, NO_EFFECT, WORSE})


class Boost(NamedTuple):  # a tuple: ranking makes one per fact per candidate
    kind: str
    weight: float  # added to relevance; 0 for what only explains
    detail: Any  # what the reason is made of; its words are built only for the neighbours shown

    @property
    def text(self) -> str:
        return _WORDS[self.kind](self.detail)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _same(kind: str) -> Callable[[tuple[str, str | None]], str]:
    def words(detail: tuple[str, str | None]) -> str:
        value, source = detail
        return f"same {kind} ({value})" + (f", from the {source}" if source else "")
    return words


_WORDS = {
    SIGNATURE: lambda _: "exact signature match",
    MEANING: lambda similarity: f"meaning {similarity:.2f} similar",
    SYMPTOM: lambda keys: "both are " + " and ".join(BY_KEY[k].plural for k in keys),
    FLAVOR: _same("flavor"),
    ENV: _same("env"),
    SERVICE: _same("service"),
    TAGS: lambda tags: f"{_plural(len(tags), 'shared component')}: {', '.join(tags)}",
    FIXED: lambda actions: "fixed by: " + "; ".join(actions),
    NO_EFFECT: lambda actions: "tried before without effect: " + "; ".join(actions),
    WORSE: lambda actions: "made it worse last time: " + "; ".join(actions),
    AGE: lambda days: human_age(days),
}


class Neighbour(BaseModel):
    """A past incident near the alert, with what fixed it and why it ranked where it did."""

    id: str
    title: str
    score: float  # what the order is by: relevance plus fact boosts
    relevance: float  # the search's own score on a 0..1 scale (fused rank, cosine, or word match)
    similarity: float | None  # cosine similarity of meaning; None when the embedder was not used
    age_days: float | None
    age: str | None
    fixes_worked: list[str]
    fixes_failed: list[str]
    url: str | None
    service: str | None = None
    env: str | None = None
    flavor: str | None = None
    component_tags: list[str] = []
    root_cause: str | None = None
    signature_match: bool = False
    reasons: list[str]
    boosts: list[Boost] = Field(default=[], exclude=True)  # the reasons, typed, for renderers

    def reasons_except(self, *kinds: str) -> list[str]:
        """The reasons, without those of these kinds (a renderer that shows fixes or age on its own line)."""
        return [b.text for b in self.boosts if b.kind not in kinds]


def human_age(days: float) -> str:
    if days < 1:
        hours = int(days * 24)
        return "under an hour ago" if hours < 1 else f"{hours} hour{'s' * (hours != 1)} ago"
    for limit, unit, size in ((14, "day", 1), (60, "week", 7), (730, "month", 30.44), (float("inf"), "year", 365.25)):
        if days < limit:
            n = int(days // size)
            return f"{n} {unit}{'s' * (n != 1)} ago"
    raise AssertionError("unreachable")


def age_days(payload: dict[str, Any], now: datetime) -> float | None:
    stamp = payload.get(P.OPENED_AT) or payload.get("resolved_at")
    if not stamp:
        return None
    return max(0.0, (now - datetime.fromisoformat(stamp)).total_seconds() / 86400)


def relevance(similarity: float, overlap: float, weights: RankingWeights) -> float:
    """How near in meaning and in words, on 0..1: `lexical_share` of it is the share of the alert's words
    the incident has."""
    return (1 - weights.lexical_share) * similarity + weights.lexical_share * overlap


def is_signature_match(payload: dict[str, Any], signature_key: str | None) -> bool:
    return bool(signature_key) and payload.get(P.SIGNATURE_KEY) == signature_key


def boosts(
    payload: dict[str, Any],
    *,
    facts: Facts,
    weights: RankingWeights,
    similarity: float | None,
    signature_key: str | None,
    now: datetime,
    symptoms: Iterable[str] = (),
) -> list[Boost]:
    """Every fact that moves (or explains) this candidate, in reading order."""
    out: list[Boost] = []
    if is_signature_match(payload, signature_key):
        out.append(Boost(SIGNATURE, 0.0, None))  # pinned first, not weighted
    if similarity is not None:
        out.append(Boost(MEANING, 0.0, similarity))
    shared_symptoms = [k for k in symptoms if k in (payload.get(P.SYMPTOMS) or ())]
    if shared_symptoms:
        out.append(Boost(SYMPTOM, weights.same_symptom * len(shared_symptoms), shared_symptoms))
    for kind, field, mine, weight in ((FLAVOR, P.FLAVOR, facts.flavor, weights.same_flavor),
                                      (ENV, P.ENV, facts.env, weights.same_env),
                                      (SERVICE, P.SERVICE, facts.service, weights.same_service)):
        theirs = payload.get(field)
        if mine and theirs and mine.lower() == theirs.lower():
            out.append(Boost(kind, weight, (theirs, getattr(facts, "fact_sources", {}).get(field))))
    tags = payload.get(P.TAGS) or []
    shared = [t for t in facts.component_tags if t in tags]
    if shared:
        out.append(Boost(TAGS, weights.shared_tag * min(len(shared), weights.max_shared_tags), shared))
    fixes = payload.get("fixes_attempted") or []
    fixed = [f["action"] for f in fixes if worked(f["outcome"])]
    if fixed:
        out.append(Boost(FIXED, weights.worked_fix, fixed))
    for kind, outcome in ((NO_EFFECT, "no-op"), (WORSE, "worsened")):
        actions = [f["action"] for f in fixes if f["outcome"] == outcome]
        if actions:
            out.append(Boost(kind, 0.0, actions))
    days = age_days(payload, now)
    if days is not None:
        out.append(Boost(AGE, weights.recency * 0.5 ** (days / weights.recency_half_life_days), days))
    return out


class Candidate(NamedTuple):
    """A search hit before ranking: its payload (the ranking fields at least) and how near it is."""

    key: str
    payload: dict[str, Any]
    relevance: float
    similarity: float | None


class Ranked(NamedTuple):
    candidate: Candidate
    boosts: list[Boost]
    score: float  # relevance plus the boosts' weights (relevance alone when not ranked)
    pinned: bool


def rank(
    candidates: Iterable[Candidate],
    *,
    facts: Facts,
    weights: RankingWeights,
    signature_key: str | None,
    now: datetime,
    by_facts: bool = True,
    symptoms: Iterable[str] = (),
) -> list[Ranked]:
    """Candidates best first. With `by_facts`, the score is relevance plus every boost's weight and an exact
    signature match (when `weights.signature_pin`) goes first whatever its score; without, the search's
    own order by relevance stands. Stable among equal scores."""
    pin = by_facts and weights.signature_pin
    ranked = []
    for c in candidates:
        why = boosts(c.payload, facts=facts, weights=weights, similarity=c.similarity, signature_key=signature_key,
                     now=now, symptoms=symptoms)
        score = c.relevance + (sum(b.weight for b in why) if by_facts else 0.0)
        ranked.append(Ranked(c, why, score, pin and is_signature_match(c.payload, signature_key)))
    ranked.sort(key=lambda r: (not r.pinned, -r.score))
    return ranked


def neighbour(
    payload: dict[str, Any],
    *,
    boosts: list[Boost],
    score: float,
    relevance: float,
    similarity: float | None,
    now: datetime,
) -> Neighbour:
    """The neighbour as the responder sees it. Run on the few shown, with their whole payload."""
    fixes = payload.get("fixes_attempted") or []
    days = age_days(payload, now)
    return Neighbour(
        id=payload.get(P.INCIDENT_ID, "?"),
        title=payload.get("title", ""),
        score=round(score, 6),
        relevance=round(relevance, 6),
        similarity=None if similarity is None else round(similarity, 6),
        age_days=None if days is None else round(days, 2),
        age=None if days is None else human_age(days),
        fixes_worked=[f["action"] for f in fixes if worked(f["outcome"])],
        fixes_failed=[f["action"] for f in fixes if not worked(f["outcome"])],
        url=payload.get("url"),
        service=payload.get(P.SERVICE),
        env=payload.get(P.ENV),
        flavor=payload.get(P.FLAVOR),
        component_tags=payload.get(P.TAGS) or [],
        root_cause=payload.get("root_cause"),
        signature_match=any(b.kind == SIGNATURE for b in boosts),
        reasons=[b.text for b in boosts],
        boosts=boosts,
    )
