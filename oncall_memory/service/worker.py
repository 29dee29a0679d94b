"""The background side of the service: look up each accepted alert and post the answer, once.

Webhooks return as soon as the job is claimed; this worker does the slow part. A pager outage is
retried and logged, never raised into the service.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from ..retrieve import Lookup
from .inbound import Job
from .ledger import Ledger
from .notify import PostFailed, Target

log = logging.getLogger(__name__)


class Enricher:
    def __init__(
        self,
        lookup: Callable[[Job], Lookup],
        ledger: Ledger,
        targets: list[Target],
    ):
        self._lookup = lookup
        self._ledger = ledger
        self._targets = targets
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.processed = 0  # jobs finished, posted or not: for tests and benchmarks

    def submit(self, job: Job) -> bool:
        """Queue `job` unless this alert was already handled. True if it was queued."""
        if not self._ledger.claim(job):
            log.info("duplicate delivery of %s: nothing to do", job.key)
            return False
        self._queue.put(job)
        return True

    def start(self) -> None:
        for job in self._ledger.pending():  # claimed before a restart, never finished
            self._queue.put(job)
        self._thread = threading.Thread(target=self._run, name="enricher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        if self._thread:
            self._queue.put(None)
            self._thread.join(timeout)

    def join(self) -> None:
        """Block until every queued job is finished."""
        self._queue.join()

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                self._process(job)
            except Exception:  # one bad job must not kill the worker
                log.exception("enriching %s failed", job.key if job else "?")
                if job is not None:
                    self._ledger.finish(job.key, ok=False, detail="unexpected error")
            finally:
                self.processed += job is not None
                self._queue.task_done()

    def _process(self, job: Job) -> None:
        lookup = self._lookup(job)
        targets = [t for t in self._targets if t.accepts(job)]
        failures = []
        for target in targets:
            if self._ledger.delivered(job.key, target.name):
                continue
            try:
                target.send(job, lookup)
            except PostFailed as exc:
                failures.append(str(exc))
                log.error("%s: %s", job.key, exc)
                continue
            self._ledger.deliver(job.key, target.name)
        ids = ", ".join(n.id for n in lookup.neighbours) or "none"
        self._ledger.finish(job.key, ok=not failures, detail="; ".join(failures) or f"neighbours: {ids}")
        log.info("%s: neighbours %s, posted to %s", job.key, ids, [t.name for t in targets] or "nowhere (no target set)")
