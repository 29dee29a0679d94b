"""Replacing a collection whole: reindex (with another embedder), restore (from a backup), migrate (from
local mode into Edge). Each builds the new collection beside the live one and swaps it in only when it
is complete; a failure at any point before the swap drops the half-built one and leaves the live one.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from ..domain.payload import incident_from_payload
from ..embedders import Embedder
from ..errors import InvalidInput, OncallMemoryError
from ..settings import Settings
from ..store.backup import read_manifest, restore_into
from ..store.engines import IncidentStore, copy_points, open_edge, open_local, open_store
from ..store.guard import GuardedStore
from .ingest import IngestReport, ingest

REINDEX_SUFFIX = "__reindex"
RESTORE_SUFFIX = "__restore"


def reindex(guard: GuardedStore, embedder: Embedder, *, batch_size: int) -> IngestReport:
    """Rebuild the collection with `embedder` from the incidents stored in it (the payload holds every
    field). Waits for an index build under way (both replace the collection)."""
    with guard.exclusive():
        lock, store = guard.lock, guard.store
        with lock:
            if not store.exists():
                raise InvalidInput(f"no collection {store.collection!r} at {store.location} to reindex")
            incidents = [incident_from_payload(payload) for _, payload, _ in store.points()]
            temp = store.sibling(store.collection + REINDEX_SUFFIX)
        try:
            with lock:
                if temp.exists():
                    temp.drop()  # a half-built one from an earlier failed reindex
            report = ingest(incidents, temp, embedder, batch_size=batch_size, lock=lock)
            with lock:
                if temp.count() != len(incidents):
                    raise OncallMemoryError(f"reindex built {temp.count()} incidents, expected {len(incidents)}")
        except BaseException:
            _drop(temp, lock)
            raise
        with lock:
            store.swap_in(temp)
            store.record_count(store.count())
        return report


def restore(settings: Settings, path: Path) -> int:
    """Put the backup at `path` in place of the collection, even one too damaged to open: built beside,
    checked against the backup's count, then swapped in. Returns the points restored."""
    manifest = read_manifest(path)
    with open_store(settings, load=False) as store:
        temp = store.sibling(store.collection + RESTORE_SUFFIX)
        try:
            if temp.exists():
                temp.drop()
            written = restore_into(temp, path, manifest)
            if written != manifest["count"] or temp.count() != manifest["count"]:
                raise OncallMemoryError(f"restored {temp.count()} points, the backup holds {manifest['count']}")
        except BaseException:
            _drop(temp)
            raise
        store.swap_in(temp)
        store.record_count(manifest["count"])
        return written


def migrate(settings: Settings) -> int:
    """Copy the local-mode store under the data dir into the Edge engine there, vectors and all: no
    embedding call. Returns the points copied.

    Raises `InvalidInput` when there is nothing to copy or the Edge collection already holds incidents.
    """
    with open_local(settings) as source, open_edge(settings) as target:
        if not source.exists():
            raise InvalidInput(f"no local-mode collection {settings.collection!r} at {source.location} to migrate")
        if target.exists() and target.count():
            raise InvalidInput(
                f"the edge collection at {target.location} already holds {target.count()} incidents; "
                "move it away first (migrate never overwrites)"
            )
        copied = copy_points(source, target)
        if target.count() != source.count():
            raise OncallMemoryError(f"copied {copied} points but the edge store holds {target.count()}")
        target.record_count(copied)
        return copied


def _drop(temp: IncidentStore, lock: AbstractContextManager[Any] | None = None) -> None:
    with lock or nullcontext():
        temp.drop()
        temp.close()
