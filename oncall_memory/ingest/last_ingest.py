"""The last ingest into a memory, kept beside its store (`last_ingest-<collection>.json`), so the service's
status panel and `/metrics` see the scheduled flow's runs and a CLI's, not only their own."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..datadir import write_atomic
from ..errors import OncallMemoryError
from .ingest import IngestReport

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LastIngest:
    at: datetime
    new: int
    updated: int
    unchanged: int
    rejected: int
    stopped: bool

    @classmethod
    def of(cls, report: IngestReport, *, stopped: bool) -> LastIngest:
        return cls(datetime.now(UTC), report.new, report.updated, report.unchanged, report.rejected, stopped)


def record(path: Path | None, last: LastIngest) -> None:
    """Write it whole; a read-only data dir loses the status line, not the ingest."""
    if path is None:
        return
    try:
        write_atomic(path, json.dumps({**asdict(last), "at": last.at.isoformat()}))
    except (OSError, OncallMemoryError) as exc:
        log.warning("could not record the last ingest in %s: %s", path, exc)


def read(path: Path | None) -> LastIngest | None:
    """The recorded one, or None (none yet, or a torn or foreign file)."""
    if path is None or not path.exists():
        return None
    try:
        raw = json.loads(path.read_text())
        return LastIngest(**{**raw, "at": datetime.fromisoformat(raw["at"])})
    except (OSError, ValueError, TypeError, KeyError):
        return None
