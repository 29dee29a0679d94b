"""Room to write in the data dir. When a write fails for want of it (a full disk, a read-only mount, a disk
fault), a webhook answers 503 with `Retry-After` (pagers retry; nothing was claimed half), lookups keep
answering (they read), and `/readyz` says why it is not ready until space is back.
"""

from __future__ import annotations

import logging
import time

from ..datadir import MB, DataDir, cannot_write

__all__ = ["RETRY_AFTER", "Room", "cannot_write"]

log = logging.getLogger(__name__)

RETRY_AFTER = 60  # seconds a pager is asked to wait before posting again
REMEMBERED = 120.0  # a failed write makes the service not ready this long (unless a later write succeeds)


class Room:
    """The data dir's free space and its last refused write, for readiness and /metrics."""

    def __init__(self, data: DataDir, min_free_mb: float):
        self._data = data
        self._min_free = int(min_free_mb * MB)
        self._refused: tuple[float, str] | None = None

    def free_bytes(self) -> int | None:
        try:
            return self._data.free_bytes()
        except OSError:
            return None

    def refused(self, why: str) -> None:
        """A write to the data dir just failed (logged once a minute, without a traceback)."""
        last = self._refused
        self._refused = (time.monotonic(), why)
        if last is None or time.monotonic() - last[0] > 60:
            log.error("the data dir cannot be written (%s): webhooks answer 503 until it can; lookups go on", why)

    def wrote(self) -> None:
        self._refused = None

    def problem(self) -> str | None:
        """Why the service should not be sent webhooks now, or None."""
        if self._refused and time.monotonic() - self._refused[0] < REMEMBERED:
            return f"the data dir cannot be written ({self._refused[1]}): free space under {self._data.root}"
        free = self.free_bytes()
        if free is not None and free < self._min_free:
            return (
                f"{free / MB:.0f} MB free under {self._data.root} (under ONCALL_MEMORY_MIN_FREE_MB="
                f"{self._min_free // MB}): free space before webhooks are refused"
            )
        return None
