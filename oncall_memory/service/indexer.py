"""The service keeps the embedded store's vector index up to date: it checks every `CHECK_EVERY`
seconds whether a build is due (`Memory.index_due`: past the threshold, a tenth unindexed) and builds it
beside the live collection (`Memory.build_index`), so lookups never wait for it."""

from __future__ import annotations

import logging
import threading

from ..memory import Memory

log = logging.getLogger(__name__)

CHECK_EVERY = 30.0  # seconds; the check is a count, the build only when due


class Indexer:
    """A context manager: leaving it stops the checks (a build under way finishes first; its child process
    is not killed, so the copy is swapped in or dropped whole)."""

    def __init__(self, memory: Memory, *, every: float = CHECK_EVERY):
        self._memory = memory
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="vector-index", daemon=True)

    def __enter__(self) -> Indexer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(600)

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            try:
                if self._memory.index_due():
                    log.info("building the vector index beside the live collection")
                    report = self._memory.build_index()
                    if report:
                        log.info("vector index built: %d of %d incidents indexed; copy %.1fs, build %.1fs, "
                                 "catch-up %.1fs (%d written meanwhile), swap %.2fs", report.indexed, report.count,
                                 report.copy_seconds, report.build_seconds, report.replay_seconds, report.replayed,
                                 report.swap_seconds)
            except Exception:  # the live collection is untouched by a failed build; try at the next check
                log.exception("building the vector index failed; lookups stay exact")
