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


def explain_and_score(
    payload: dict[str, Any],
    *,
    relevance: float,
    similarity: float | None,
    alert: Alert,
    signature_key: str | None,
    weights: RankingWeights | None,
    now: datetime,
) -> Neighbour:
    """Build the neighbour; with `weights`, boost its score by the facts it shares with the alert."""
    w = weights
    score = relevance
    reasons: list[str] = []
    fixes = payload.get("fixes_attempted") or []
    worked = [f["action"] for f in fixes if f["outcome"] in ("resolved", "mitigated")]
    failed = [f["action"] for f in fixes if f["outcome"] not in ("resolved", "mitigated")]
    worse = [f["action"] for f in fixes if f["outcome"] == "worsened"]
    age_days = _age_days(payload, now)
    match = bool(signature_key) and payload.get(P.SIGNATURE_KEY) == signature_key

    if match:
        reasons.append("exact signature match")
    if similarity is not None:
        reasons.append(f"meaning {similarity:.2f} similar")
    for label, fact, field, weight in (
        ("flavor", alert.flavor, P.FLAVOR, w.same_flavor if w else 0.0),
        ("env", alert.env, P.ENV, w.same_env if w else 0.0),
        ("service", alert.service, P.SERVICE, w.same_service if w else 0.0),
    ):
        reason = _same(label, fact, payload.get(field))
        if reason:
            reasons.append(reason)
            score += weight
    shared = [t for t in alert.component_tags if t in (payload.get(P.TAGS) or [])]
    if shared:
        reasons.append(f"{len(shared)} shared component{'s' * (len(shared) != 1)}: {', '.join(shared)}")
        if w:
            score += w.shared_tag * min(len(shared), w.max_shared_tags)
    if worked:
        reasons.append("fixed by: " + "; ".join(worked))
        if w:
            score += w.worked_fix
    noop = [f["action"] for f in fixes if f["outcome"] == "no-op"]
    if noop:
        reasons.append("tried before without effect: " + "; ".join(noop))
    if worse:
        reasons.append("made it worse last time: " + "; ".join(worse))
    if age_days is not None:
        reasons.append(human_age(age_days))
        if w:
            score += w.recency * 0.5 ** (age_days / w.recency_half_life_days)

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


def order(neighbours: list[Neighbour], *, pin_signatures: bool) -> list[Neighbour]:
    """Best first: exact signature matches pinned on top (when asked), then by score."""
    return sorted(neighbours, key=lambda n: (not (pin_signatures and n.signature_match), -n.score))
