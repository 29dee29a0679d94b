"""Incident sources: where incidents actually live. One small interface, one module per system.

A source maps its own fields onto `Incident` explicitly (see each module's `to_incident`), and yields
a `Rejected` for a record it cannot map, so one bad record never stops the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from ..domain.incident import Incident
from ..domain.rejected import Rejected

if TYPE_CHECKING:
    from ..settings import Settings

# Where "all history" begins for a source that needs a start (PagerDuty's own first year).
FIRST_YEAR = datetime(2009, 1, 1, tzinfo=timezone.utc)


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


def default_window_days(source: str) -> float | None:
    """The look-back of a scheduled run: None (the whole backlog) for jsonl, which is the backlog
    itself; a week for an API source, so runs overlap on purpose. None always means everything."""
    return None if source == "jsonl" else 7.0


def window_of(days: float | None) -> Window | None:
    """The window of the last `days` days; None (everything) for None."""
    return None if days is None else Window.last(days)


def scheduled_window(source: str, days: float | None, settings: Settings) -> Window | None:
    """A scheduled run's window. A source whose settings group has `refresh_days` (PagerDuty's) reaches back
    at least that far, so notes added after an incident left the shorter window still arrive (an unchanged
    incident costs no embedding)."""
    if days is None or not days:
        return None
    refresh = getattr(settings.group(source), "refresh_days", None)
    return Window.last(max(days, refresh) if isinstance(refresh, (int, float)) else days)


def moment(value: object) -> datetime | None:
    """A vendor's timestamp (ISO 8601, Jira's "+0000" offsets included) as an aware datetime, or None."""
    if not isinstance(value, str) or not value.strip():
        return None
    fixed = re.sub(r"([+-]\d{2})(\d{2})$", r"\1:\2", value.strip()).replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(fixed)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


class Source:
    """Anything that yields incidents for a window. Use as a context manager: some hold a connection."""

    name: str
    # True for a source that reads its whole backlog at once (a file, an export): a backfill then asks it
    # once for the whole span instead of 180 days at a time since 2009 (dozens of reads of the same file).
    # An API source, which pages through a time range, leaves it False.
    whole_backlog: bool = False
    # Of what it read last, how many fell outside the window it was asked for (a file read whole says; an API
    # asked for a window returns only the window's).
    outside: int = 0

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        """Incidents in `window` (None: all), a `Rejected` for each record that cannot be mapped.
        Raises `SourceFailed` if the source cannot be read at all."""
        raise NotImplementedError

    def one_shot(self) -> None:
        """This run is a one-off backfill, not one of a schedule's: keep nothing for later runs (PagerDuty
        otherwise remembers the incidents it saw open, to look at them again). Nothing to keep by default."""

    def close(self) -> None:
        """Release what the source holds (a connection pool); nothing by default."""

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
