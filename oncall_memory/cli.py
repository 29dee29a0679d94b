"""The `oncall-memory` command: wiring only. It builds settings and objects and calls the library.

Exit status: 0 done; 1 failed (embedder or store down; nothing half-written); 2 bad input or usage;
3 ingested, but some backlog lines were rejected (they are listed on stderr).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from .alert import Alert, Filters
from .backlog import explain, read_jsonl
from .commands import register
from .embedders import make_embedder
from .errors import EmbeddingFailed, InvalidInput, OncallMemoryError
from .ingest import IngestReport, ingest
from .retrieve import Lookup, Retriever
from .settings import Settings
from .storage import open_store

EXIT_FAILED, EXIT_USAGE, EXIT_REJECTED = 1, 2, 3


def _err(message: str) -> None:
    print(f"oncall-memory: {message}", file=sys.stderr)


# -- ingest ---------------------------------------------------------------------------------------


def _progress():
    """A progress callback drawing a bar on a terminal, or None when output is piped."""
    if not sys.stderr.isatty():
        return None, None
    from rich.progress import Progress

    bar = Progress(transient=True)
    task = bar.add_task("embedding", total=None)
    return bar, lambda done, total: bar.update(task, completed=done, total=total)


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    embedder = make_embedder(settings)
    store = open_store(settings)
    bar, on_batch = _progress()
    started = time.perf_counter()
    try:
        if bar:
            bar.start()
        report = ingest(
            read_jsonl(Path(args.path)), store, embedder, batch_size=settings.embed_batch_size, on_batch=on_batch
        )
    except EmbeddingFailed as exc:
        done: IngestReport = getattr(exc, "report", IngestReport())
        _err(f"{exc}")
        _err(f"stopped: batches before the failure are stored ({done.counts()}); re-run to finish the rest")
        return EXIT_FAILED
    finally:
        if bar:
            bar.stop()
        store.close()
    elapsed = time.perf_counter() - started
    for rejection in report.rejections:
        _err(f"rejected {rejection}")
    if args.json:
        print(json.dumps({k: v for k, v in report.counts().items()}))
    else:
        c = report.counts()
        print(
            f"{c['new']} new, {c['updated']} updated, {c['unchanged']} unchanged, {c['rejected']} rejected "
            f"({c['embedding_calls']} embedding calls, {elapsed:.1f}s) into {settings.collection!r} at "
            f"{store.location}"
        )
    return EXIT_REJECTED if report.rejected else 0


# -- similar --------------------------------------------------------------------------------------


def _alert_from_args(args: argparse.Namespace) -> Alert:
    data: dict = {}
    if args.alert:
        try:
            data = json.loads(Path(args.alert).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidInput(f"cannot read alert file {args.alert}: {exc}") from exc
    if args.text:
        data["text"] = args.text
    if "text" not in data:
        raise InvalidInput('give the alert text: oncall-memory similar "TEXT" (or --alert FILE.json)')
    try:
        return Alert.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(f"alert: {explain(exc)}") from exc


def print_lookup(lookup: Lookup, alert: Alert, elapsed: float) -> None:
    how = f"{lookup.mode} search" + (", ranked by facts" if lookup.ranked else "")
    print(f'Past incidents like "{alert.text}"  ({how}, {elapsed * 1000:.0f} ms)')
    if lookup.degraded:
        print(f"  ! {lookup.degraded}")
    if not lookup.neighbours:
        print("  nothing similar on record.")
    for i, n in enumerate(lookup.neighbours, start=1):
        sim = f"  similarity {n.similarity:.2f}" if n.similarity is not None else ""
        print(f"\n{i}. {n.id}  {n.title}\n   score {n.score:.3f}{sim}")
        where = " · ".join(x for x in (n.age, n.env, n.flavor, n.service) if x)
        if where:
            print(f"   {where}")
        if n.fixes_worked:
            print(f"   fixed by: {'; '.join(n.fixes_worked)}")
        if n.fixes_failed:
            print(f"   tried without effect: {'; '.join(n.fixes_failed)}")
        print(f"   why: {'; '.join(n.reasons)}")
        if n.url:
            print(f"   {n.url}")


def cmd_similar(args: argparse.Namespace, settings: Settings) -> int:
    alert = _alert_from_args(args)
    try:
        filters = Filters(service=args.service, env=args.env, flavor=args.flavor, component_tags=args.tag or [],
                          status=args.status, since=args.since)
    except ValidationError as exc:
        raise InvalidInput(f"filter: {explain(exc)}") from exc
    embedder = make_embedder(settings)
    store = open_store(settings)
    try:
        retriever = Retriever(store, embedder, weights=settings.weights, candidates=settings.candidates)
        load = getattr(embedder, "load", None)  # a local model loads lazily: keep that out of the lookup time
        if load and args.mode != "lexical":
            load()
        started = time.perf_counter()
        lookup = retriever.similar(alert, filters=filters, limit=args.limit, mode=args.mode, rank=not args.no_rank)
        elapsed = time.perf_counter() - started
    finally:
        store.close()
    if args.json:
        if lookup.degraded:
            _err(lookup.degraded)
        print(json.dumps([n.model_dump(mode="json") for n in lookup.neighbours], indent=2))
    else:
        print_lookup(lookup, alert, elapsed)
    return 0


# -- stats ----------------------------------------------------------------------------------------


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    store = open_store(settings)
    try:
        if not store.exists():
            raise InvalidInput(f"no collection {settings.collection!r} at {store.location}: run `oncall-memory ingest`")
        info = {"collection": store.collection, "location": store.location, **store.contract(), "count": store.count()}
    finally:
        store.close()
    if args.json:
        print(json.dumps(info))
    else:
        for key, value in info.items():
            print(f"{key:>12}: {value}")
    return 0


# -- wiring ---------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="oncall-memory", description="Have we seen this alert before, and what fixed it?")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="store a JSONL backlog (a file or a folder of *.jsonl)")
    p.add_argument("path")
    p.add_argument("--json", action="store_true", help="print the counts as a JSON object")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("similar", help="past incidents like an alert, with what fixed them")
    p.add_argument("text", nargs="?", help="the alert text")
    p.add_argument("--alert", metavar="FILE", help="a JSON alert: text plus facts (service, env, flavor, component_tags)")
    p.add_argument("--service", help="only incidents of this service")
    p.add_argument("--env", help="only incidents in this env")
    p.add_argument("--flavor", help="only incidents on this flavor (eks, aks, gke, ...)")
    p.add_argument("--tag", action="append", help="only incidents with this component tag (repeatable)")
    p.add_argument("--status", help="only incidents with this status")
    p.add_argument("--since", help="only incidents opened on or after this date (ISO 8601)")
    p.add_argument("--limit", type=int, default=5, help="how many (1..100, default 5)")
    p.add_argument("--mode", choices=["hybrid", "dense", "lexical"], default="hybrid")
    p.add_argument("--no-rank", action="store_true", help="search order only, no fact-based ranking")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=cmd_similar)

    p = sub.add_parser("stats", help="the collection, its model, dimension and count")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    register(sub)  # later commands (eval, schedule, ...) add themselves there
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings()
        return args.func(args, settings)
    except ValidationError as exc:
        _err(f"configuration: {explain(exc)}")
        return EXIT_USAGE
    except InvalidInput as exc:
        _err(str(exc))
        return EXIT_USAGE
    except OncallMemoryError as exc:
        _err(str(exc))
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
