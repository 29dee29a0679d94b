"""The backlog on disk (JSONL files and Markdown post-mortems, see `files`) as a source."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..domain.incident import Incident
from ..domain.rejected import Rejected
from . import Source, Window
from .files import read_backlog


class JsonlSource(Source):
    name = "jsonl"
    whole_backlog = True  # the file is read whole whatever the window

    def __init__(self, path: Path | str):
        self.path = Path(path)

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        """Incidents opened or resolved inside `window` (all of them for None); undated ones always."""
        self.outside = 0
        for item in read_backlog(self.path):
            if window is None or isinstance(item, Rejected) or _touches(item, window):
                yield item
            else:
                self.outside += 1


def _touches(incident: Incident, window: Window) -> bool:
    stamps = [t for t in (incident.opened_at, incident.resolved_at) if t is not None]
    return not stamps or any(window.since <= t < window.until for t in stamps)
