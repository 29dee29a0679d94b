"""`oncall-memory ingest`: store a backlog on disk (JSONL, post-mortems in Markdown), or backfill PagerDuty's history."""

from __future__ import annotations

# Commands import what only they use when they run: every `oncall-memory` call imports every command
# module, and a lookup through a running service should start in well under half a second.
import argparse
import json
import sys
import time
from contextlib import nullcontext
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from ..integrations import BUILT_IN_SOURCES
from .common import EXIT_FAILED, EXIT_REJECTED, err
from .when import moment

if TYPE_CHECKING:
    from ..ingest.ingest import IngestReport
    from ..ingest.job import Ingests
    from ..memory import Memory
    from ..settings import Settings
    from ..store.engines.base import IndexReport


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest",
        help="store a backlog (a JSONL file, a Markdown post-mortem, or a folder of *.jsonl and *.md), "
        "or backfill an API source's history",
    )
    p.add_argument(
        "path", nargs="?", help="a JSONL file, a post-mortem (.md), or a folder: its *.jsonl and its *.md at any depth"
    )
    p.add_argument(
        "--source",
        default="jsonl",
        metavar="SOURCE",
        help=f"jsonl (files: the default), {', '.join(BUILT_IN_SOURCES)}, or an installed plugin's",
    )
    p.add_argument(
        "--since",
        type=moment,
        help="only incidents opened from this moment (2026-11-01, yesterday, 7d); an API source: the start "
        "of the backfill (default: all history)",
    )
    p.add_argument("--until", type=moment, help="only incidents opened before this date (default: now)")
    p.add_argument("--json", action="store_true", help="print the counts as a JSON object")
    p.set_defaults(func=cmd_ingest)


def _progress(what: str):
    """A progress bar and its callback on a terminal; nothing when output is piped."""
    if not sys.stderr.isatty():
        return nullcontext(), None
    from rich.progress import Progress

    bar = Progress(transient=True)
    task = bar.add_task(what, total=None)
    return bar, lambda done, total: bar.update(task, completed=done, total=total)


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    from ..ingest.ingest import IngestStopped
    from ..ingest.job import IngestJob
    from ..memory import Memory
    from ..sources import FIRST_YEAR, Window
    from ..sources.factory import source_names
    from . import remote
    from .service_memory import ServiceMemory

    if args.source not in source_names():
        raise InvalidInput(f"unknown source {args.source!r}: use one of {', '.join(source_names())}")
    if args.since and args.until and args.since >= args.until:
        raise InvalidInput(
            f"--since {args.since:%Y-%m-%d %H:%M} is not before --until {args.until:%Y-%m-%d %H:%M}: no incident "
            "could be in that window (swap them?)"
        )
    started = time.perf_counter()
    now = datetime.now(timezone.utc)
    if args.since and args.since > now:
        raise InvalidInput(f"--since {args.since:%Y-%m-%d %H:%M}Z is in the future: no incident was opened then")
    until = args.until or now
    outside = 0
    # A running service owns the memory: the backlog goes through it (cli/service_memory.py).
    url = remote.service_url(settings)
    memory: Memory | ServiceMemory
    with ServiceMemory(settings, url) if url else Memory.open(settings) as memory:
        ready_in = 0.0
        if isinstance(memory, Memory):
            # Readied before the clock starts: the first run exports the local model once (seconds), which is
            # no part of the ingest rate a team would plan with.
            readying = time.perf_counter()
            memory.embedder.load()
            ready_in = time.perf_counter() - readying
            started += ready_in
        else:
            err(f"through the service at {url}, which owns this memory")
        try:
            if args.source != "jsonl":
                report = _backfill(memory, settings, args.source, args.path, args.since or FIRST_YEAR, until)
                build_index_if_due(memory)
            else:
                if not args.path:
                    raise InvalidInput(
                        "give the backlog: oncall-memory ingest PATH (a JSONL file, a post-mortem, or a folder of them)"
                    )
                bar, on_batch = _progress("embedding")
                window = Window(args.since or FIRST_YEAR, until) if args.since or args.until else None
                job = IngestJob(settings, "jsonl", args.path, window)
                with bar:
                    outcome = job.run(memory, on_batch=on_batch, on_index=_building_index)
                report = outcome.report
                _built(outcome.index)
                outside = outcome.outside
                if window is None and not report.fetched and not report.rejected:
                    raise InvalidInput(
                        f"{args.path} holds no incidents: nothing was stored (a backlog is one JSON object per "
                        "line, or a Markdown post-mortem: docs/integrations.md)"
                    )
        except IngestStopped as exc:
            err(f"{exc}")
            err(f"stopped: batches before the failure are stored ({exc.report.counts()}); re-run to finish the rest")
            return EXIT_FAILED
        location = memory.location
    _print(report, args, settings, location, time.perf_counter() - started, outside)
    if outside and not args.json:
        bounds = " and ".join(f"--{b}" for b in ("since", "until") if getattr(args, b))
        err(f"{outside} incidents in {args.path} fell outside {bounds} and were not stored")
    if ready_in > 2 and not args.json:
        err(f"the embedding model took {ready_in:.1f}s to get ready (the first time only; not counted above)")
    return EXIT_REJECTED if report.rejected else 0


def build_index_if_due(memory: Ingests) -> None:
    """Past the threshold, an ingest ends by (re)building the vector index (see `Memory.build_index`)."""
    if memory.index_due():
        _building_index()
        _built(memory.build_index())


def _building_index() -> None:
    err(
        "building the vector index (once past ONCALL_MEMORY_INDEX_THRESHOLD incidents; lookups stay exact "
        "until it is done) ..."
    )


def _built(report: IndexReport | None) -> None:
    if report:
        err(
            f"vector index: {report.indexed} of {report.count} incidents indexed in "
            f"{report.copy_seconds + report.build_seconds + report.replay_seconds + report.swap_seconds:.1f}s"
        )


def _backfill(
    memory: Ingests, settings: Settings, source: str, path: str | None, since: datetime, until: datetime
) -> IngestReport:
    """An API source's history, 180 days at a time, resumable; a file source's, once (see `backfill`)."""
    from ..ingest.backfill import backfill
    from ..ingest.job import IngestJob

    job = IngestJob(settings, source, path, follow_open=False)
    bar, on_slice = _progress(source if job.reads_whole else f"{source}, 180 days at a time")
    with bar:
        return backfill(
            memory,
            job,
            since,
            until,
            checkpoint=settings.dir.backfill_checkpoint_of(source),
            on_slice=on_slice,
        )


def _rate(per_second: float) -> str:
    """ "157 incidents/s"; under two a second, "1.4 incidents/s" or "one incident every 3 s": never "1 incidents/s"."""
    if per_second >= 2:
        return f"{per_second:,.0f} incidents/s"
    if per_second >= 0.5:
        return f"{per_second:.1f} incidents/s"
    return f"one incident every {1 / max(per_second, 1e-9):,.0f} s"


def _print(
    report: IngestReport, args: argparse.Namespace, settings: Settings, location: str, elapsed: float, outside: int = 0
) -> None:
    for rejection in report.rejections:
        err(f"rejected {rejection}")
    c = report.counts()
    if args.json:
        print(json.dumps({**c, "outside_window": outside}))
    else:
        # The rate counts what was written when anything was embedded (the cost that matters), else all read:
        # an update whose text did not change (its facts or symptoms did) costs no embedding call.
        embedded = c["new"] + c["updated"] if c["embedding_calls"] else 0
        rate = (embedded or c["new"] + c["updated"] + c["unchanged"]) / max(elapsed, 1e-6)
        print(
            f"{c['new']} new, {c['updated']} updated, {c['unchanged']} unchanged, {c['rejected']} rejected "
            f"({c['embedding_calls']} embedding calls, {elapsed:.1f}s, {_rate(rate)}"
            f"{' embedded' if embedded else ''}) into {settings.collection!r} at {location}"
        )
