"""The service's own ingest schedule: on the embedded default the store has one owner, so the
service that serves lookups also runs the ingest, through the same `Memory`."""

from __future__ import annotations

import logging

from ..memory import Memory
from ..settings import Settings
from ..sources import default_window_days, scheduled_window
from ..sources.factory import make_source
from .periodic import Periodic

log = logging.getLogger(__name__)


class IngestTimer(Periodic):
    """Ingest `settings.ingest_source` every `settings.ingest_interval` seconds, first at start.
    A context manager: leaving it stops the timer after the run in progress."""

    name = "ingest-schedule"
    at_start = True

    def __init__(self, settings: Settings, memory: Memory):
        super().__init__(settings.ingest_interval)
        self._settings = settings
        self._memory = memory

    def failed(self) -> str:
        return f"scheduled ingest of {self._settings.ingest_source} failed"

    def run(self) -> None:
        s = self._settings
        days = s.ingest_window_days if s.ingest_window_days is not None else default_window_days(s.ingest_source)
        # The source is read before the memory is touched: lookups go on while PagerDuty pages.
        with make_source(s, s.ingest_source, s.ingest_path) as source:
            items = list(source.incidents(scheduled_window(s.ingest_source, days, s.pagerduty_refresh_days)))
        report = self._memory.ingest(items)
        log.info("scheduled ingest of %s: %s", s.ingest_source, report.counts())
