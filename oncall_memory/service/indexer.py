"""The service keeps the embedded store's vector index up to date: it checks every `CHECK_EVERY`
seconds whether a build is due (`Memory.index_due`: past the threshold, a tenth unindexed) and builds it
beside the live collection (`Memory.build_index`), so lookups never wait for it."""

from __future__ import annotations

import logging

from ..memory import Memory
from .periodic import Periodic

log = logging.getLogger(__name__)

CHECK_EVERY = 30.0  # seconds; the check is a count, the build only when due


class Indexer(Periodic):
    """A context manager: leaving it stops the checks (a build under way finishes first; its child process
    is not killed, so the copy is swapped in or dropped whole)."""

    name = "vector-index"
    finish_within = 600.0

    def __init__(self, memory: Memory, *, every: float = CHECK_EVERY):
        super().__init__(every)
        self._memory = memory

    def failed(self) -> str:  # the live collection is untouched by a failed build; the next check tries again
        return "building the vector index failed; lookups stay exact"

    def run(self) -> None:
        if not self._memory.index_due():
            return
        log.info("building the vector index beside the live collection")
        report = self._memory.build_index()
        if report:
            log.info(
                "vector index built: %d of %d incidents indexed; copy %.1fs, build %.1fs, "
                "catch-up %.1fs (%d written meanwhile), swap %.2fs",
                report.indexed,
                report.count,
                report.copy_seconds,
                report.build_seconds,
                report.replay_seconds,
                report.replayed,
                report.swap_seconds,
            )
