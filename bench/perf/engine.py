"""The raw engine under the product's store, for benchmarks that time the engine's own call beside the
pipeline's on the same data (the product keeps these private: nothing else should reach past the store)."""

from __future__ import annotations

import qdrant_edge as E

from oncall_memory.memory import Memory
from oncall_memory.store.engines import IncidentStore
from oncall_memory.store.engines.edge import EdgeStore


def store_of(memory: Memory) -> IncidentStore:
    return memory._store


def edge_shard(store: IncidentStore) -> E.EdgeShard:
    if not isinstance(store, EdgeStore):
        raise SystemExit(f"this benchmark times the embedded Edge engine, not {type(store).__name__}: unset QDRANT_URL")
    return store.shard
