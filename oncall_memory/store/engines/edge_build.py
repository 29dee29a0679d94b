"""Building the vector index beside the live collection, for `EdgeStore` (see `base.BuildsIndex` and
`guard.GuardedStore.build_index`): flush and note later writes, copy the files, optimize the copy in a child
process (`edge_index`), replay what was written meanwhile, swap it in. Lookups wait only for the swap."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import qdrant_edge as E

from ...errors import OncallMemoryError
from .base import IndexJob, IndexReport, IndexState
from .edge_layout import INDEX_SUFFIX, _engine_errors, _load, _on_disk, _quantized


class _Store(Protocol):
    """What the index build uses of the store it is part of (`EdgeStore`)."""

    collection: str
    _root: Path
    _path: Path
    _shard: E.EdgeShard | None
    _indexed: int
    _written_since: set[str] | None

    @property
    def shard(self) -> E.EdgeShard: ...
    @property
    def location(self) -> str: ...
    def count(self) -> int: ...
    def contract(self) -> dict[str, Any]: ...
    def _config(self, contract: dict[str, Any] | None = None) -> E.EdgeConfig: ...
    def _update_contract(self, **fields: Any) -> None: ...
    def _open_shard(self) -> None: ...
    def _close_shard(self) -> None: ...
    def _record_indexed(self, count: int) -> None: ...


class BuildsBeside:
    """The index build's steps, mixed into `EdgeStore`."""

    _written_since: set[str] | None  # the ids written since a build began (None: no build running)

    @_engine_errors
    def optimize(self: _Store) -> bool:
        """Build the HNSW index here and now. The engine holds the GIL meanwhile (every thread of this process
        stops): for a running service use `Memory.build_index`, which builds on a copy in another process."""
        changed = self.shard.optimize()
        self._record_indexed(self.count())
        return changed

    def _record_indexed(self: _Store, count: int) -> None:
        # The engine's `indexed_vectors_count` adds up the sparse vectors too; what the graph covers is
        # recorded with the contract: the points of the last build (later writes are searched exactly).
        self._update_contract(indexed=count)
        self._indexed = count

    # -- the vector index, built beside ------------------------------------------------------------

    @_engine_errors
    def index_state(self: _Store) -> IndexState | None:
        if self._shard is None:
            return IndexState(0, 0)
        return IndexState(self.count(), self._indexed)

    @_engine_errors
    def begin_index(self: _Store) -> IndexJob:
        """Flush, and note every id written from now on (they are copied into the built index before the
        swap). The caller holds writes back until `copy_for_index` returns."""
        self.shard.flush()
        self._written_since = set[str]()
        return IndexJob(self._root / f"{self.collection}{INDEX_SUFFIX}", self.count(), time.perf_counter())

    def copy_for_index(self: _Store, job: IndexJob) -> None:
        """Copy the collection's files (lookups may run meanwhile: they only read)."""
        shutil.rmtree(job.path, ignore_errors=True)  # left by a build that died
        shutil.copytree(self._path, job.path)
        job.copy_seconds = time.perf_counter() - job.started

    def build_index(self: _Store, job: IndexJob, *, timeout: float | None = None) -> None:
        """Optimize the copy in a child process (no lock held: lookups and writes go on here)."""
        started = time.perf_counter()
        contract = self.contract()
        command = [
            sys.executable,
            "-m",
            "oncall_memory.store.engines.edge_index",
            str(job.path),
            str(contract["dimension"]),
            "disk" if _on_disk(contract) else "memory",
            _quantized(contract),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise OncallMemoryError(
                f"building the vector index of {self.location} failed: {(done.stderr or done.stdout).strip()[-500:]}"
            )
        job.built_seconds = time.perf_counter() - started

    def written_during(self: _Store, job: IndexJob) -> list[str]:
        return sorted(self._written_since or ())

    @_engine_errors
    def read_points(self: _Store, ids: Sequence[str]) -> list[Any]:
        return self.shard.retrieve(list(ids), with_payload=True, with_vector=True)

    @_engine_errors
    def replay_into_index(self: _Store, job: IndexJob, batches: Iterable[list[Any]]) -> None:
        """Write what was written during the build (the records `batches` yields) into the built copy."""
        started = time.perf_counter()
        built = _load(job.path, self._config())
        try:
            if (held := built.count(E.CountRequest(exact=True))) != job.count:
                raise OncallMemoryError(
                    f"the index build of {self.location} holds {held} points, the copy had {job.count}"
                )
            for records in batches:
                built.update(
                    E.UpdateOperation.upsert_points(
                        [E.Point(r.id, dict(r.vector or {}), r.payload or {}) for r in records]
                    )
                )
                job.replayed.extend(str(r.id) for r in records)
            built.flush()
        finally:
            built.close()
        job.replay_seconds = time.perf_counter() - started

    @_engine_errors
    def finish_index(self: _Store, job: IndexJob) -> IndexReport:
        """Swap the built collection in: the only step lookups wait for."""
        started = time.perf_counter()
        self._written_since = None
        self._close_shard()
        retired = self._root / f"{self.collection}.retired"
        shutil.rmtree(retired, ignore_errors=True)
        self._path.rename(retired)
        job.path.rename(self._path)
        shutil.rmtree(retired, ignore_errors=True)
        self._record_indexed(job.count)
        self._open_shard()
        return IndexReport(
            self.count(),
            self._indexed,
            job.copy_seconds,
            job.built_seconds,
            job.replay_seconds,
            time.perf_counter() - started,
            len(job.replayed),
        )

    def abandon_index(self: _Store, job: IndexJob) -> None:
        self._written_since = None
        shutil.rmtree(job.path, ignore_errors=True)
