"""Years of history in one command: `oncall-memory ingest --source pagerduty --since 2023-01-01`.

The span is read in slices (PagerDuty's own range limit, 180 days); each slice is read whole, then
ingested, and a checkpoint in the data dir records how far the backfill got, so a run stopped by a
crash (or Ctrl-C) resumes after the last complete slice. Re-ingesting what is stored costs no
embedding call either way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from ..datadir import write_atomic
from ..sources import Window
from .ingest import IngestReport
from .job import IngestJob, Ingests

# A slice: PagerDuty's own range limit (180 days), and for every source the span one checkpoint covers.
SLICE = timedelta(days=180)


def slices(since: datetime, until: datetime) -> list[Window]:
    out, start = [], since
    while start < until:
        out.append(Window(start, min(until, start + SLICE)))
        start = out[-1].until
    return out


def backfill(
    memory: Ingests,
    job: IngestJob,
    since: datetime,
    until: datetime,
    *,
    checkpoint: Path | None = None,
    on_slice: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Run `job` over every slice of [since, until), resuming from `checkpoint`. The vector index is left
    to the caller (once, at the end). A source that reads its whole backlog at once (a file) is asked once
    for the whole span: slicing it would read the same file once per slice."""
    parts = [Window(since, until)] if job.reads_whole else slices(since, until)
    resume = _resume_point(checkpoint, since, until)
    report = IngestReport()
    for number, window in enumerate(parts, start=1):
        if resume is not None and window.until <= resume:
            if on_slice:
                on_slice(number, len(parts))
            continue
        report.add(job.over(window).run(memory, index=False).report)
        if checkpoint is not None:
            _record(checkpoint, since, until, window.until)
        if on_slice:
            on_slice(number, len(parts))
    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)  # finished: a later backfill of the same span starts afresh
    return report


def _resume_point(checkpoint: Path | None, since: datetime, until: datetime) -> datetime | None:
    if checkpoint is None:
        return None
    try:
        state = json.loads(checkpoint.read_text())
    except (OSError, ValueError):
        return None
    if state.get("since") != since.isoformat():
        return None  # another backfill's checkpoint: start from the beginning
    return datetime.fromisoformat(state["done_until"])


def _record(checkpoint: Path, since: datetime, until: datetime, done_until: datetime) -> None:
    write_atomic(
        checkpoint,
        json.dumps({"since": since.isoformat(), "until": until.isoformat(), "done_until": done_until.isoformat()}),
    )
