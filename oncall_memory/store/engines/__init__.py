"""The incident store seam: one contract (`base`), one module per engine.

- `edge` (the embedded default): Qdrant Edge, Qdrant's Rust engine in-process.
- `local`: qdrant-client's local mode, pure Python; `:memory:` for tests.
- a Qdrant server or cluster when `QDRANT_URL` is set.

Each engine module is imported only when chosen, so the Edge path never imports `qdrant_client`.
"""

from __future__ import annotations

from ...settings import Settings
from .base import DENSE, SPARSE, Hit, IncidentStore, Mode, QueryPlan, StoredPoint, copy_points

__all__ = [
    "DENSE",
    "SPARSE",
    "Hit",
    "IncidentStore",
    "Mode",
    "QueryPlan",
    "StoredPoint",
    "copy_points",
    "open_store",
    "open_local",
]


def open_store(settings: Settings, *, load: bool = True) -> IncidentStore:
    """A Qdrant server when `QDRANT_URL` is set; else the embedded engine `ONCALL_MEMORY_STORE`
    (`edge` by default, `local` for qdrant-client's local mode; a `:memory:` data dir means local).
    `load=False`: lock an Edge store without reading it (to restore over a damaged one)."""
    if settings.qdrant_url:
        from .qdrant import QdrantStore

        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantStore.server(
            settings.qdrant_url,
            key,
            settings.collection,
            shards=settings.qdrant_shards,
            replicas=settings.qdrant_replicas,
        )
    if settings.store == "local" or settings.dir.in_memory:
        return open_local(settings)
    return open_edge(settings, load=load)


def open_local(settings: Settings) -> IncidentStore:
    """qdrant-client's local mode under the data dir (or in memory)."""
    from .qdrant import QdrantStore

    data = settings.dir
    data.make_private()
    return QdrantStore.local(data.qdrant, settings.collection)


def open_edge(settings: Settings, *, load: bool = True) -> IncidentStore:
    """The Edge engine under the data dir, whatever the settings choose (`migrate` asks for it by name).
    Raises `DiskFull` when opening it could fill the disk (a memory-backed filesystem fills the engine's
    preallocated files as it opens them)."""
    from .edge import EdgeStore

    data = settings.dir
    data.make_private()
    if load:
        data.need_for_store(data.edge / settings.collection, writing=0, doing="open the embedded store")
    return EdgeStore(
        data.edge,
        settings.collection,
        load=load,
        payload_on_disk=settings.payload_on_disk,
        quantization=settings.quantization,
    )
