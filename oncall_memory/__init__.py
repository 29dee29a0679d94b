"""oncall-memory: have we seen this alert before, and what fixed it?

    from oncall_memory import Alert, Memory, Settings, read_jsonl

    with Memory.open(Settings()) as memory:
        memory.ingest(read_jsonl("fixtures/incidents.jsonl"))
        for n in memory.similar(Alert(text="pods crash looping on start")).neighbours:
            print(n.id, n.title, n.fixes_worked, n.reasons)

The names below are the public API; everything else is internal and may move.
"""

from .alert import Alert, Filters
from .backlog import Rejected, read_jsonl
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
from .ingest import IngestReport, IngestStopped
from .memory import Memory, Readiness
from .ranking import Neighbour
from .retrieve import Lookup
from .settings import RankingWeights, Settings

__version__ = "0.1.0"

__all__ = [
    "Alert", "ContractMismatch", "Embedder", "EmbeddingFailed", "Filters", "Fix", "Incident", "IngestReport",
    "IngestStopped", "InvalidInput", "Lookup", "Memory", "Neighbour", "OncallMemoryError", "Outcome", "Readiness",
    "RankingWeights", "Rejected", "Settings", "SourceFailed", "StoreUnavailable", "make_embedder", "read_jsonl",
]
