"""Moving memory between engines and models, without losing it on the way.

- `migrate`: copy a local-mode store into the Edge engine, vectors and all: no embedding call.
- `reindex`: rebuild a collection with the configured embedder from the incidents stored in it (the
  payload holds every field), build it beside the old one and swap it in only when complete.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator

from .embedders import Embedder
from .errors import InvalidInput, OncallMemoryError
from .incident import Incident
from .ingest import IngestReport, ingest
from .payload import incident_from_payload
from .settings import Settings
from .storage import open_store
from .store import DENSE, SPARSE, IncidentStore, StoredPoint
from .store_edge import EdgeStore
from .store_qdrant import QdrantStore

log = logging.getLogger(__name__)

REINDEX_SUFFIX = "__reindex"


def copy_points(source: IncidentStore, target: IncidentStore, *, batch: int = 256) -> int:
    """Copy every point (both vectors and the whole payload) from `source` into `target`."""
    contract = source.contract()
    target.ensure_collection(contract["embed_model"], contract["dimension"])
    copied, pending = 0, []
    for point_id, payload, vectors in source.points(with_vectors=True, batch=batch):
        pending.append(StoredPoint(point_id, list(vectors[DENSE]), vectors[SPARSE], payload))
        if len(pending) >= batch:
            target.write(pending)
            copied, pending = copied + len(pending), []
    target.write(pending)
    return copied + len(pending)


def migrate(settings: Settings) -> int:
    """Copy the local-mode store under the data dir into the Edge engine. Returns the points copied.

    Raises `InvalidInput` when there is nothing to copy or the Edge collection already holds incidents.
    """
    source = QdrantStore.open(settings.model_copy(update={"store": "local", "qdrant_url": None}))
    try:
        if not source.exists():
            raise InvalidInput(f"no local-mode collection {settings.collection!r} at {source.location} to migrate")
        target = EdgeStore.open(settings)
        try:
            if target.exists() and target.count():
                raise InvalidInput(
                    f"the edge collection at {target.location} already holds {target.count()} incidents; "
                    "move it away first (migrate never overwrites)"
                )
            copied = copy_points(source, target)
            if target.count() != source.count():
                raise OncallMemoryError(f"copied {copied} points but the edge store holds {target.count()}")
            return copied
        finally:
            target.close()
    finally:
        source.close()


def _stored_incidents(store: IncidentStore) -> Iterator[Incident]:
    for _, payload, _ in store.points():
        yield incident_from_payload(payload)


def reindex(settings: Settings, embedder: Embedder) -> IngestReport:
    """Rebuild the collection with `embedder`; the old one is untouched until the new one is complete."""
    temp_name = settings.collection + REINDEX_SUFFIX
    old = open_store(settings)
    try:
        if not old.exists():
            raise InvalidInput(f"no collection {settings.collection!r} at {old.location} to reindex")
        expected = old.count()
        temp = old.sibling(temp_name)
        try:
            if temp.exists():
                temp.drop()  # a half-built one from an earlier failed reindex
            report = ingest(_stored_incidents(old), temp, embedder, batch_size=settings.embed_batch_size)
            if temp.count() != expected:
                raise OncallMemoryError(f"reindex built {temp.count()} incidents, expected {expected}")
        except BaseException:
            temp.drop()
            temp.close()
            raise
        _swap(old, temp, settings, temp_name)
        return report
    finally:
        old.close()


def _swap(old: IncidentStore, new: IncidentStore, settings: Settings, temp: str) -> None:
    """Put the new collection in the old one's place."""
    if isinstance(old, EdgeStore) and isinstance(new, EdgeStore):
        old.close()
        new.close()
        root = settings.data_dir / "edge"
        name = settings.collection
        retired = f"{name}.retired"
        shutil.rmtree(root / retired, ignore_errors=True)
        (root / name).rename(root / retired)  # directory renames: each one is atomic
        (root / temp).rename(root / name)
        (root / f"{temp}.contract.json").replace(root / f"{name}.contract.json")
        shutil.rmtree(root / retired, ignore_errors=True)
        (root / f"{temp}.lock").unlink(missing_ok=True)
        return
    # qdrant-client stores cannot rename a collection: rebuild the old name from the new one's
    # vectors (no embedding), then drop the temporary one.
    old.drop()
    copy_points(new, old)
    new.drop()
    new.close()
