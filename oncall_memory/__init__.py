"""oncall-memory: have we seen this alert before, and what fixed it?

    from oncall_memory import Alert, Memory, Settings, read_jsonl

    with Memory.open(Settings()) as memory:
        memory.ingest(read_jsonl("fixtures/incidents.jsonl"))
        for n in memory.similar(Alert(text="pods crash looping on start")).neighbours:
            print(n.id, n.title, n.fixes_worked, n.reasons)

The names below are the public API; everything else is internal and may move.
"""

import importlib.abc
import importlib.machinery
import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING

# Where each public name lives. Imported on first use (PEP 562), so `import oncall_memory.cli` or a
# single module does not pay for the whole package (a CLI lookup through a running service takes
# about half a second, most of it imports).
_EXPORTS = {
    "Alert": "domain.alert",
    "Filters": "domain.alert",
    "Rejected": "domain.rejected",
    "read_jsonl": "sources.jsonl_files",
    "read_backlog": "sources.files",
    "Embedder": "embedders",
    "make_embedder": "embedders",
    "ContractMismatch": "errors",
    "EmbeddingFailed": "errors",
    "InvalidInput": "errors",
    "OncallMemoryError": "errors",
    "SourceFailed": "errors",
    "StoreUnavailable": "errors",
    "Fix": "domain.incident",
    "Incident": "domain.incident",
    "Outcome": "domain.incident",
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
    from .answer.ranking import Neighbour
    from .answer.retrieve import Lookup
    from .domain.alert import Alert, Filters
    from .domain.incident import Fix, Incident, Outcome
    from .domain.rejected import Rejected
    from .embedders import Embedder, make_embedder
    from .errors import (
        ContractMismatch,
        EmbeddingFailed,
        InvalidInput,
        OncallMemoryError,
        SourceFailed,
        StoreUnavailable,
    )
    from .ingest.ingest import IngestReport, IngestStopped
    from .memory import Memory
    from .settings import RankingWeights, Settings
    from .sources.files import read_backlog
    from .sources.jsonl_files import read_jsonl
    from .store.readiness import Readiness


# Old paths that still import, the same module under both names, for plugins written against them and Prefect
# deployments registered before the flow moved. Each warns once (a FutureWarning naming the new path) and stops
# working after OLD_PATHS_UNTIL: a plugin imports from `oncall_memory.plugin`, which does not move.
OLD_PATHS_UNTIL = "2027-06-30"
_MOVED = {
    **{
        m: f"domain.{m}"
        for m in (
            "alert",
            "annotations",
            "distill",
            "facts",
            "incident",
            "label_facts",
            "lexical",
            "noise",
            "pasted",
            "signature",
            "vocabulary",
        )
    },
    "rule_alerts": "integrations.rule_alerts",
    "domain.rule_alerts": "integrations.rule_alerts",
    "mcp_server": "mcp.server",
    "mcp_proxy": "mcp.proxy",
    "signatures": "credentials",
    "ingest.backlog": "sources.jsonl_files",  # Rejected and validation_message are read there too
    "ingest.flow": "orchestration.flow",  # a deployment's entrypoint (`schedule` registers the new one)
    "integrations.payload": "integrations.loose",
}
_warned: set[str] = set()


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        prefix, _, old = fullname.partition(".")
        if prefix != __name__ or old not in _MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        old = spec.name.partition(".")[2]
        if not _warned:
            import warnings

            warnings.warn(
                f"{spec.name} is an old path of {__name__}.{_MOVED[old]}: import from oncall_memory.plugin "
                f"(old paths stop importing after {OLD_PATHS_UNTIL})",
                FutureWarning,
                stacklevel=2,
            )
        _warned.add(old)
        return import_module(f".{_MOVED[old]}", __name__)

    def exec_module(self, module: ModuleType) -> None:
        pass  # imported whole by `create_module`


sys.meta_path.insert(0, _OldPaths())


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
