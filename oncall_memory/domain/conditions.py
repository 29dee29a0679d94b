"""Conditions a stored point must meet, as plain data: each store turns them into its engine's filter.

Keeping them engine-neutral keeps `qdrant_client` off the import path of the embedded (Edge) engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Match:
    """The payload field `key` equals `value` (or, for a list field, contains it)."""

    key: str
    value: str | bool

    def holds(self, payload: dict[str, Any]) -> bool:
        have = payload.get(self.key)
        return self.value in have if isinstance(have, list) else have == self.value


@dataclass(frozen=True)
class Range:
    """The datetime payload field `key` lies in [gte, lt)."""

    key: str
    gte: datetime | None = None
    lt: datetime | None = None

    def holds(self, payload: dict[str, Any]) -> bool:
        stamp = payload.get(self.key)
        if not stamp:
            return False
        value = datetime.fromisoformat(stamp)
        return (self.gte is None or value >= self.gte) and (self.lt is None or value < self.lt)


@dataclass(frozen=True)
class HasId:
    """The point is one of these."""

    ids: frozenset[str]

    def holds(self, payload: dict[str, Any]) -> bool:  # pragma: no cover - ids are not in the payload
        raise TypeError("HasId is answered by the engine, not by a payload")


Condition = Match | Range | HasId
Where = Sequence[Condition]


def holds(where: Iterable[Condition], payload: dict[str, Any]) -> bool:
    """Does `payload` meet every condition? The same test the engines apply, for points found otherwise."""
    return all(c.holds(payload) for c in where)
