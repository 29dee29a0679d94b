"""Room to write in the data dir. When a write fails for want of it (a full disk, a read-only mount, a disk
fault), a webhook answers 503 with `Retry-After` (pagers retry; nothing was claimed half), lookups keep
answering (they read), and `/readyz` says why it is not ready until space is back.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
import time

from ..datadir import MB, DataDir
from ..errors import DiskFull

log = logging.getLogger(__name__)

RETRY_AFTER = 60  # seconds a pager is asked to wait before posting again
REMEMBERED = 120.0  # a failed write makes the service not ready this long (unless a later write succeeds)
_OS_ERRORS = {
    errno.ENOSPC: "no space left",
    errno.EDQUOT: "over the disk quota",
    errno.EROFS: "read-only",
    errno.EIO: "I/O error",
}
# What SQLite says, in its own words, when the file cannot take a write (SQLITE_FULL, SQLITE_READONLY,
# SQLITE_IOERR, SQLITE_CANTOPEN under a read-only folder).
_SQLITE = ("database or disk is full", "readonly database", "disk i/o error", "unable to open database file")


def cannot_write(exc: BaseException) -> str | None:
    """Why `exc` is the data dir refusing a write, in words, or None for any other error."""
    if isinstance(exc, DiskFull):
        return str(exc)
    if isinstance(exc, OSError) and exc.errno in _OS_ERRORS:
        return f"{_OS_ERRORS[exc.errno]} ({exc.filename or 'data dir'})"
    if isinstance(exc, sqlite3.OperationalError) and any(m in str(exc).lower() for m in _SQLITE):
        return str(exc)
    return None


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
