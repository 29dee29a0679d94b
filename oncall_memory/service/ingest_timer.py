"""The service's own ingest schedule: on the embedded default the store has one owner, so the
service that serves lookups also runs the ingest, through the same `Memory`."""

from __future__ import annotations

import logging
import threading

from ..memory import Memory
from ..settings import Settings
from ..sources import default_window_days, scheduled_window
from ..sources.factory import make_source

log = logging.getLogger(__name__)


class IngestTimer:
    """Ingest `settings.ingest_source` every `settings.ingest_interval` seconds, first at start.
    A context manager: leaving it stops the timer after the run in progress."""

    def __init__(self, settings: Settings, memory: Memory):
        self._settings = settings
        self._memory = memory
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ingest-schedule", daemon=True)

    def __enter__(self) -> IngestTimer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def run_once(self) -> None:
        s = self._settings
        days = s.ingest_window_days if s.ingest_window_days is not None else default_window_days(s.ingest_source)
        # The source is read before the memory is touched: lookups go on while PagerDuty pages.
        with make_source(s, s.ingest_source, s.ingest_path) as source:
            items = list(source.incidents(scheduled_window(s.ingest_source, days, s.pagerduty_refresh_days)))
        report = self._memory.ingest(items)
        log.info("scheduled ingest of %s: %s", s.ingest_source, report.counts())

    def _loop(self) -> None:
        while True:
            try:
                self.run_once()
            except Exception:  # a failed run changes nothing; the next one tries again
                log.exception("scheduled ingest of %s failed", self._settings.ingest_source)
            if self._stop.wait(self._settings.ingest_interval):
                return
