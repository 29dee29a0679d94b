"""Incident sources: where incidents actually live. One small interface, one module per system.

A source maps its own fields onto `Incident` explicitly (see each module's `to_incident`), and yields
a `Rejected` for a record it cannot map, so one bad record never stops the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Protocol

from ..backlog import Rejected
from ..incident import Incident


@dataclass(frozen=True)
class Window:
    """A time window [since, until). Runs overlap on purpose; idempotent ingest makes that free."""

    since: datetime
    until: datetime

    @classmethod
    def last(cls, days: float, now: datetime | None = None) -> Window:
        now = now or datetime.now(timezone.utc)
        return cls(now - timedelta(days=days), now)

    def __str__(self) -> str:
        return f"{self.since:%Y-%m-%dT%H:%MZ}..{self.until:%Y-%m-%dT%H:%MZ}"


def default_window_days(source: str) -> float:
    """The look-back of a scheduled run: 0 (the whole file) for jsonl, which is the backlog itself;
    a week for an API source, so runs overlap on purpose."""
    return 0 if source == "jsonl" else 7


class Source(Protocol):
    """Anything that yields incidents for a window. Raises `SourceFailed` if it cannot be read at all."""

    name: str

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        ...
