"""The incident store seam: one contract (`base`), one module per engine.

- `edge` (the embedded default): Qdrant Edge, Qdrant's Rust engine in-process.
- `local`: qdrant-client's local mode, pure Python; `:memory:` for tests.
- a Qdrant server or cluster when `QDRANT_URL` is set.

Each engine module is imported only when chosen, so the Edge path never imports `qdrant_client`.
"""

from __future__ import annotations

from pathlib import Path

from ..settings import Settings
from .base import DENSE, SPARSE, Hit, IncidentStore, Mode, QueryPlan, StoredPoint, copy_points

__all__ = ["DENSE", "SPARSE", "Hit", "IncidentStore", "Mode", "QueryPlan", "StoredPoint", "copy_points",
           "open_store", "open_local"]


def open_store(settings: Settings, *, load: bool = True) -> IncidentStore:
    """A Qdrant server when `QDRANT_URL` is set; else the embedded engine `ONCALL_MEMORY_STORE`
    (`edge` by default, `local` for qdrant-client's local mode; a `:memory:` data dir means local).
    `load=False`: lock an Edge store without reading it (to restore over a damaged one)."""
    if settings.qdrant_url:
        from .qdrant import QdrantStore

        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantStore.server(settings.qdrant_url, key, settings.collection,
                                  shards=settings.qdrant_shards, replicas=settings.qdrant_replicas)
    if settings.store == "local" or str(settings.data_dir) == ":memory:":
        return open_local(settings)
    from .edge import EdgeStore

    return EdgeStore(Path(settings.data_dir) / "edge", settings.collection, load=load)


def open_local(settings: Settings) -> IncidentStore:
    """qdrant-client's local mode under the data dir (or in memory)."""
    from .qdrant import QdrantStore

    if str(settings.data_dir) == ":memory:":
        return QdrantStore.local(":memory:", settings.collection)
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    return QdrantStore.local(str(Path(settings.data_dir) / "qdrant"), settings.collection)


def open_edge(settings: Settings) -> IncidentStore:
    """The Edge engine under the data dir, whatever the settings choose (for `migrate`)."""
    from .edge import EdgeStore

    return EdgeStore(Path(settings.data_dir) / "edge", settings.collection)
