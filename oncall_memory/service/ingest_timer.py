"""The service's own ingest schedule: on the embedded default the store has one owner, so the
service that serves lookups also runs the ingest, through the same `Memory`."""

from __future__ import annotations

import logging

from ..ingest.job import IngestJob
from ..memory import Memory
from ..settings import Settings
from .periodic import Periodic

log = logging.getLogger(__name__)


class IngestTimer(Periodic):
    """Ingest `settings.schedule.ingest_source` every `settings.schedule.ingest_interval` seconds, first at start.
    A context manager: leaving it stops the timer after the run in progress."""

    name = "ingest-schedule"
    at_start = True

    def __init__(self, settings: Settings, memory: Memory):
        super().__init__(settings.schedule.ingest_interval)
        self._settings = settings
        self._memory = memory

    def failed(self) -> str:
        return f"scheduled ingest of {self._settings.schedule.ingest_source} failed"

    def run(self) -> None:
        s = self._settings
        # The index is the service's indexer's to build (it checks every 30 s), so no build here.
        job = IngestJob.scheduled(s, s.schedule.ingest_source, s.schedule.ingest_path, s.schedule.ingest_window_days)
        outcome = job.run(self._memory, index=False)
        log.info("scheduled ingest of %s: %s", job.describe(), outcome.report.counts())
