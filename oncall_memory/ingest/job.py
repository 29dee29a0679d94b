"""The ingest job, one for every caller (the Prefect flow, the service's timer, the CLI, the backfill):
read a window from a source, whole, before the memory is touched (a source that fails writes nothing,
and lookups go on while PagerDuty pages); ingest it; then build the vector index if that made it due.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Protocol

from ..domain.incident import Incident
from ..domain.rejected import Rejected
from ..settings import Settings
from ..sources import Window, default_window_days, scheduled_window
from ..sources.factory import make_source
from ..store.engines.base import IndexReport
from .ingest import Embed, IngestReport


class Ingests(Protocol):
    """What an ingest job writes into: the `Memory`, or a running service's (`cli/service_memory.py`)."""

    def ingest(
        self,
        items: Iterable[Incident | Rejected],
        *,
        embed: Embed | None = None,
        on_batch: Callable[[int, int], None] | None = None,
    ) -> IngestReport: ...

    def index_due(self) -> bool: ...

    def build_index(self) -> IndexReport | None: ...


Items = list[Incident | Rejected]


@dataclass(frozen=True)
class Outcome:
    report: IngestReport
    index: IndexReport | None  # the vector index, when the ingest made it due
    outside: int = 0  # incidents the source read that fell outside the window (not stored)


@dataclass(frozen=True)
class IngestJob:
    settings: Settings
    source: str  # "jsonl" or "pagerduty"
    path: str | None = None  # the JSONL file or folder
    window: Window | None = None  # None: the whole backlog
    follow_open: bool = True  # a PagerDuty source looks again at incidents it saw open (not for a backfill)

    @classmethod
    def scheduled(cls, settings: Settings, source: str, path: str | None, window_days: float | None) -> IngestJob:
        """The job a schedule runs: the last `window_days` (None: the source's own default)."""
        days = window_days if window_days is not None else default_window_days(source)
        return cls(settings, source, path, scheduled_window(source, days, settings))

    def over(self, window: Window | None) -> IngestJob:
        return replace(self, window=window)

    def read(self) -> Items:
        """The window's incidents, read whole (and the lines that were not, as rejections)."""
        return self.read_counting()[0]

    def read_counting(self) -> tuple[Items, int]:
        """`read`, and how many incidents the source read that fell outside the window."""
        with make_source(self.settings, self.source, self.path, follow_open=self.follow_open) as source:
            items = list(source.incidents(self.window))
            return items, source.outside

    @cached_property
    def reads_whole(self) -> bool:
        """Does the source read its whole backlog at once (`Source.whole_backlog`: a file, not an API)? Asked
        once a job (making the source to ask may open a client)."""
        with make_source(self.settings, self.source, self.path, follow_open=self.follow_open) as source:
            return source.whole_backlog

    def into(
        self,
        memory: Ingests,
        items: Items,
        *,
        embed: Embed | None = None,
        on_batch: Callable[[int, int], None] | None = None,
        index: bool = True,
        on_index: Callable[[], None] | None = None,
    ) -> Outcome:
        """Ingest what was read; then, unless `index` is False, build the vector index if now due
        (`on_index` is told first: it takes a while)."""
        report = memory.ingest(items, embed=embed, on_batch=on_batch)
        if not index or not memory.index_due():
            return Outcome(report, None)
        if on_index:
            on_index()
        return Outcome(report, memory.build_index())

    def run(
        self,
        memory: Ingests,
        *,
        on_batch: Callable[[int, int], None] | None = None,
        index: bool = True,
        on_index: Callable[[], None] | None = None,
    ) -> Outcome:
        """Read, then ingest (see `into`)."""
        items, outside = self.read_counting()
        outcome = self.into(memory, items, on_batch=on_batch, index=index, on_index=on_index)
        return replace(outcome, outside=outside)

    def describe(self) -> str:
        return f"{self.source} {self.window or 'all time'}"
