"""Sub-commands beyond the core lookup, registered here to keep cli.py small."""

from __future__ import annotations

import argparse
from pathlib import Path

from .embedders import make_embedder
from .evaluate import as_json, evaluate, format_table, read_labels
from .maintenance import migrate, reindex
from .retrieve import Retriever
from .settings import Settings
from .storage import open_store


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    queries = read_labels(Path(args.labels))
    embedder = make_embedder(settings)
    store = open_store(settings)
    try:
        retriever = Retriever(store, embedder, weights=settings.weights, candidates=settings.candidates)
        results = evaluate(retriever, queries, with_facts=not args.text_only)
    finally:
        store.close()
    print(as_json(results) if args.json else format_table(results, len(queries)))
    return 0


def add_schedule_arguments(p: argparse.ArgumentParser) -> None:
    """The schedule options, shared by `oncall-memory schedule` and `python flows/ingest.py`."""
    p.add_argument("--source", choices=["jsonl", "pagerduty"], default="jsonl")
    p.add_argument("--path", help="for jsonl: a file or a folder of *.jsonl")
    p.add_argument("--window-days", type=float, help="look-back window of each run (default: 7 for pagerduty, all of a jsonl backlog)")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--interval", type=float, help="seconds between runs (default 900)")
    when.add_argument("--cron", help='a cron schedule, e.g. "*/15 * * * *"')


def cmd_schedule(args: argparse.Namespace, settings: Settings) -> int:
    from .schedule import serve_schedule  # Prefect's import is slow: only for the command that serves

    serve_schedule(settings, source=args.source, path=args.path, window_days=args.window_days,
                   interval=args.interval, cron=args.cron)
    return 0


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn  # noqa: PLC0415  (the web stack loads only for the command that serves)

    from .service import create_app  # noqa: PLC0415

    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = settings.model_copy(update=overrides)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info")
    return 0


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    copied = migrate(settings)
    print(f"copied {copied} incidents from the local-mode store into the edge store (no embedding calls); "
          f"the local-mode files under {settings.data_dir / 'qdrant'} are untouched")
    return 0


def cmd_reindex(args: argparse.Namespace, settings: Settings) -> int:
    embedder = make_embedder(settings)
    report = reindex(settings, embedder)
    print(f"reindexed {report.new} incidents with {embedder.model} ({embedder.dimension} dims, "
          f"{report.embedding_calls} embedding calls) into {settings.collection!r}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the extra sub-commands to the `oncall-memory` parser."""
    p = sub.add_parser("eval", help="recall@3/5, hit@1 and MRR on labelled queries, per retrieval configuration")
    p.add_argument("labels", help='JSONL: {"text": ..., facts..., "relevant": [incident ids]} per line')
    p.add_argument("--text-only", action="store_true", help="drop the queries' facts: ranking without pager labels")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("schedule", help="run the ingest flow on a schedule (starts a local Prefect server if needed)")
    add_schedule_arguments(p)
    p.set_defaults(func=cmd_schedule)

    p = sub.add_parser("migrate", help="copy a local-mode store (ONCALL_MEMORY_STORE=local) into the edge engine")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("reindex", help="rebuild the collection with the configured embedder; swapped in when complete")
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser("serve", help="the webhook enrichment service (PagerDuty, Alertmanager, Opsgenie) and /similar")
    p.add_argument("--host", help="default ONCALL_MEMORY_HOST or 127.0.0.1")
    p.add_argument("--port", type=int, help="default ONCALL_MEMORY_PORT or 8080")
    p.set_defaults(func=cmd_serve)
