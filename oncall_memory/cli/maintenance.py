"""Moving the memory between engines and models: `migrate`, `reindex`."""

from __future__ import annotations

import argparse

from ..memory import Memory
from ..settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("migrate", help="copy a local-mode store (ONCALL_MEMORY_STORE=local) into the edge engine")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("reindex", help="rebuild the collection with the configured embedder; swapped in when complete")
    p.set_defaults(func=cmd_reindex)


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    copied = Memory.migrate(settings)
    print(f"copied {copied} incidents from the local-mode store into the edge store (no embedding calls); "
          f"the local-mode files under {settings.data_dir / 'qdrant'} are untouched")
    return 0


def cmd_reindex(args: argparse.Namespace, settings: Settings) -> int:
    with Memory.open(settings) as memory:
        report = memory.reindex()
        model, dimension = memory.embedder.model, memory.embedder.dimension
    print(f"reindexed {report.new} incidents with {model} ({dimension} dims, "
          f"{report.embedding_calls} embedding calls) into {settings.collection!r}")
    return 0
