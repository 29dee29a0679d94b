"""oncall-memory: have we seen this alert before, and what fixed it?

    from oncall_memory import Alert, Memory, Settings, read_jsonl

    with Memory.open(Settings()) as memory:
        memory.ingest(read_jsonl("fixtures/incidents.jsonl"))
        for n in memory.similar(Alert(text="pods crash looping on start")).neighbours:
            print(n.id, n.title, n.fixes_worked, n.reasons)

The names below are the public API; everything else is internal and may move.
"""

from importlib import import_module
from typing import TYPE_CHECKING

# Where each public name lives. Imported on first use (PEP 562), so `import oncall_memory.cli` or a
# single module does not pay for the whole package (a CLI lookup through a running service takes
# about half a second, most of it imports).
_EXPORTS = {
    "Alert": "alert",
    "Filters": "alert",
    "Rejected": "ingest.backlog",
    "read_jsonl": "ingest.backlog",
    "read_backlog": "sources.files",
    "Embedder": "embedders",
    "make_embedder": "embedders",
    "ContractMismatch": "errors",
    "EmbeddingFailed": "errors",
    "InvalidInput": "errors",
    "OncallMemoryError": "errors",
    "SourceFailed": "errors",
    "StoreUnavailable": "errors",
    "Fix": "incident",
    "Incident": "incident",
    "Outcome": "incident",
    "IngestReport": "ingest.ingest",
    "IngestStopped": "ingest.ingest",
    "Memory": "memory",
    "Readiness": "store.readiness",
    "Neighbour": "answer.ranking",
    "Lookup": "answer.retrieve",
    "RankingWeights": "settings",
    "Settings": "settings",
}

if TYPE_CHECKING:  # for type checkers and IDEs: the same names, eagerly
    from .alert import Alert, Filters
    from .answer.ranking import Neighbour
    from .answer.retrieve import Lookup
    from .embedders import Embedder, make_embedder
    from .errors import (
        ContractMismatch,
        EmbeddingFailed,
        InvalidInput,
        OncallMemoryError,
        SourceFailed,
        StoreUnavailable,
    )
    from .incident import Fix, Incident, Outcome
    from .ingest.backlog import Rejected, read_jsonl
    from .ingest.ingest import IngestReport, IngestStopped
    from .memory import Memory
    from .settings import RankingWeights, Settings
    from .sources.files import read_backlog
    from .store.readiness import Readiness


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "Alert",
    "ContractMismatch",
    "Embedder",
    "EmbeddingFailed",
    "Filters",
    "Fix",
    "Incident",
    "IngestReport",
    "IngestStopped",
    "InvalidInput",
    "Lookup",
    "Memory",
    "Neighbour",
    "OncallMemoryError",
    "Outcome",
    "Readiness",
    "RankingWeights",
    "Rejected",
    "Settings",
    "SourceFailed",
    "StoreUnavailable",
    "make_embedder",
    "read_backlog",
    "read_jsonl",
]
