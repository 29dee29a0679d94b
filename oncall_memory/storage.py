"""Open the store the settings name."""

from __future__ import annotations

from .settings import Settings
from .store import IncidentStore
from .store_edge import EdgeStore
from .store_qdrant import QdrantStore


def open_store(settings: Settings) -> IncidentStore:
    """A Qdrant server when `QDRANT_URL` is set; else the embedded engine `ONCALL_MEMORY_STORE`
    (`edge` by default, `local` for qdrant-client's local mode; a `:memory:` data dir means local)."""
    if settings.qdrant_url or settings.store == "local" or str(settings.data_dir) == ":memory:":
        return QdrantStore.open(settings)
    return EdgeStore.open(settings)
