"""Rank candidates by the facts in their payload, and say why, in words a tired human reads at 3 a.m.

Meaning gets a candidate into the list; facts order it: same flavor and env, shared components, a
fix that worked, recency. An exact canonical-signature match goes first.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from . import payload as P
from .alert import Alert
from .settings import RankingWeights


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


def human_age(days: float) -> str:
    if days < 1:
        hours = int(days * 24)
        return "under an hour ago" if hours < 1 else f"{hours} hour{'s' * (hours != 1)} ago"
    for limit, unit, size in ((14, "day", 1), (60, "week", 7), (730, "month", 30.44), (float("inf"), "year", 365.25)):
        if days < limit:
            n = int(days // size)
            return f"{n} {unit}{'s' * (n != 1)} ago"
    raise AssertionError("unreachable")


def _age_days(payload: dict[str, Any], now: datetime) -> float | None:
    stamp = payload.get(P.OPENED_AT) or payload.get("resolved_at")
    if not stamp:
        return None
    return max(0.0, (now - datetime.fromisoformat(stamp)).total_seconds() / 86400)


def _same(label: str, mine: str | None, theirs: str | None) -> str | None:
    if mine and theirs and mine.lower() == theirs.lower():
        return f"same {label} ({theirs})"
    return None


def _worked(fix: dict) -> bool:
    return fix["outcome"] in ("resolved", "mitigated")


def score(
    payload: dict[str, Any],
    *,
    relevance: float,
    alert: Alert,
    weights: RankingWeights | None,
    now: datetime,
) -> float:
    """Relevance plus the fact boosts (none without `weights`). Cheap: run on every candidate."""
    if weights is None:
        return relevance
    w, total = weights, relevance
    for fact, field, weight in ((alert.flavor, P.FLAVOR, w.same_flavor), (alert.env, P.ENV, w.same_env),
                                (alert.service, P.SERVICE, w.same_service)):
        theirs = payload.get(field)
        if fact and theirs and fact.lower() == theirs.lower():
            total += weight
    tags = payload.get(P.TAGS) or []
    shared = sum(1 for t in alert.component_tags if t in tags)
    total += w.shared_tag * min(shared, w.max_shared_tags)
    if any(_worked(f) for f in payload.get("fixes_attempted") or []):
        total += w.worked_fix
    age_days = _age_days(payload, now)
    if age_days is not None:
        total += w.recency * 0.5 ** (age_days / w.recency_half_life_days)
    return total


def explain(
    payload: dict[str, Any],
    *,
    score: float,
    relevance: float,
    similarity: float | None,
    alert: Alert,
    signature_key: str | None,
    now: datetime,
) -> Neighbour:
    """The neighbour as the responder sees it, with the reasons for its place. Run on the few shown."""
    reasons: list[str] = []
    fixes = payload.get("fixes_attempted") or []
    worked = [f["action"] for f in fixes if _worked(f)]
    failed = [f["action"] for f in fixes if not _worked(f)]
    noop = [f["action"] for f in fixes if f["outcome"] == "no-op"]
    worse = [f["action"] for f in fixes if f["outcome"] == "worsened"]
    age_days = _age_days(payload, now)
    match = is_signature_match(payload, signature_key)

    if match:
        reasons.append("exact signature match")
    if similarity is not None:
        reasons.append(f"meaning {similarity:.2f} similar")
    for label, fact, field in (("flavor", alert.flavor, P.FLAVOR), ("env", alert.env, P.ENV),
                               ("service", alert.service, P.SERVICE)):
        reason = _same(label, fact, payload.get(field))
        if reason:
            reasons.append(reason)
    shared = [t for t in alert.component_tags if t in (payload.get(P.TAGS) or [])]
    if shared:
        reasons.append(f"{len(shared)} shared component{'s' * (len(shared) != 1)}: {', '.join(shared)}")
    if worked:
        reasons.append("fixed by: " + "; ".join(worked))
    if noop:
        reasons.append("tried before without effect: " + "; ".join(noop))
    if worse:
        reasons.append("made it worse last time: " + "; ".join(worse))
    if age_days is not None:
        reasons.append(human_age(age_days))

    return Neighbour(
        id=payload.get(P.INCIDENT_ID, "?"),
        title=payload.get("title", ""),
        score=round(score, 6),
        relevance=round(relevance, 6),
        similarity=None if similarity is None else round(similarity, 6),
        age_days=None if age_days is None else round(age_days, 2),
        age=None if age_days is None else human_age(age_days),
        fixes_worked=worked,
        fixes_failed=failed,
        url=payload.get("url"),
        service=payload.get(P.SERVICE),
        env=payload.get(P.ENV),
        flavor=payload.get(P.FLAVOR),
        component_tags=payload.get(P.TAGS) or [],
        root_cause=payload.get("root_cause"),
        signature_match=match,
        reasons=reasons,
    )


def is_signature_match(payload: dict[str, Any], signature_key: str | None) -> bool:
    return bool(signature_key) and payload.get(P.SIGNATURE_KEY) == signature_key
