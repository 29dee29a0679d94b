"""The engine-neutral conditions, sparse vectors and scored points, as Edge says them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import qdrant_edge as E

from ...domain.conditions import HasId, Match, Range, Where
from ...domain.lexical import Sparse


def _sparse(vector: Sparse) -> E.SparseVector:
    return E.SparseVector(list(vector.indices), [float(v) for v in vector.values])


def to_filter(where: Where) -> E.Filter | None:
    """The engine-neutral conditions as Edge's filter."""
    if not where:
        return None
    must: list[Any] = []
    for cond in where:
        if isinstance(cond, Match):
            must.append(E.FieldCondition(key=cond.key, match=E.MatchValue(cond.value)))
        elif isinstance(cond, Range):
            must.append(E.FieldCondition(key=cond.key, range=E.RangeDateTime(gte=_iso(cond.gte), lt=_iso(cond.lt))))
        elif isinstance(cond, HasId):
            must.append(E.HasIdCondition(set(cond.ids)))
        else:
            raise TypeError(f"unsupported condition for the edge store: {cond!r}")
    return E.Filter(must=must)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _ties_by_id(points: list[Any]) -> list[tuple[str, float]]:
    """The points' (id as text, score), best first, equal scores ordered by id (each id made text once)."""
    ranked = [(str(p.id), p.score) for p in points]
    ranked.sort(key=lambda pair: (-pair[1], pair[0]))
    return ranked
