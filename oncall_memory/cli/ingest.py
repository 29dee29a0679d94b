"""`oncall-memory ingest PATH`: store a JSONL backlog."""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from ..backlog import read_jsonl
from ..ingest import IngestStopped
from ..memory import Memory
from ..settings import Settings
from .common import EXIT_FAILED, EXIT_REJECTED, err


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ingest", help="store a JSONL backlog (a file or a folder of *.jsonl)")
    p.add_argument("path")
    p.add_argument("--json", action="store_true", help="print the counts as a JSON object")
    p.set_defaults(func=cmd_ingest)


def _progress():
    """A progress bar and its callback on a terminal; nothing when output is piped."""
    if not sys.stderr.isatty():
        return nullcontext(), None
    from rich.progress import Progress

    bar = Progress(transient=True)
    task = bar.add_task("embedding", total=None)
    return bar, lambda done, total: bar.update(task, completed=done, total=total)


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    bar, on_batch = _progress()
    started = time.perf_counter()
    with Memory.open(settings) as memory, bar:
        try:
            report = memory.ingest(read_jsonl(Path(args.path)), on_batch=on_batch)
        except IngestStopped as exc:
            err(f"{exc}")
            err(f"stopped: batches before the failure are stored ({exc.report.counts()}); re-run to finish the rest")
            return EXIT_FAILED
        location = memory.store.location
    elapsed = time.perf_counter() - started
    for rejection in report.rejections:
        err(f"rejected {rejection}")
    c = report.counts()
    if args.json:
        print(json.dumps(c))
    else:
        print(
            f"{c['new']} new, {c['updated']} updated, {c['unchanged']} unchanged, {c['rejected']} rejected "
            f"({c['embedding_calls']} embedding calls, {elapsed:.1f}s) into {settings.collection!r} at {location}"
        )
    return EXIT_REJECTED if report.rejected else 0
