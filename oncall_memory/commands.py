"""Sub-commands beyond the core lookup, registered here to keep cli.py small."""

from __future__ import annotations

import argparse
from pathlib import Path

from .embedders import make_embedder
from .evaluate import as_json, evaluate, format_table, read_labels
from .retrieve import Retriever
from .settings import Settings
from .store import IncidentStore


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    queries = read_labels(Path(args.labels))
    embedder = make_embedder(settings)
    store = IncidentStore.open(settings)
    try:
        retriever = Retriever(store, embedder, weights=settings.weights, candidates=settings.candidates)
        results = evaluate(retriever, queries, with_facts=not args.text_only)
    finally:
        store.close()
    print(as_json(results) if args.json else format_table(results, len(queries)))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the extra sub-commands to the `oncall-memory` parser."""
    p = sub.add_parser("eval", help="recall@3/5, hit@1 and MRR on labelled queries, per retrieval configuration")
    p.add_argument("labels", help='JSONL: {"text": ..., facts..., "relevant": [incident ids]} per line')
    p.add_argument("--text-only", action="store_true", help="drop the queries' facts: ranking without pager labels")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)
