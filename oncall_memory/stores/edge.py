"""Qdrant Edge: Qdrant's own Rust engine in-process, the embedded default.

One shard per collection under `<data dir>/edge/<collection>/`, with the collection's contract
(model, dimension, schema) beside it in `<collection>.contract.json`, since a shard has no metadata
of its own. Payload indexes are real here, so filters and exact signature look-ups do not scan.
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypeVar

import portalocker
import qdrant_edge as E

from ..conditions import HasId, Match, Range, Where
from ..errors import OncallMemoryError, StoreDamaged, StoreUnavailable
from ..lexical import Sparse
from .base import DENSE, INDEXES, RRF_K, SPARSE, Hit, IncidentStore, QueryPlan, StoredPoint, hit

_INDEX_TYPES = {"keyword": E.PayloadSchemaType.Keyword, "datetime": E.PayloadSchemaType.Datetime,
                "bool": E.PayloadSchemaType.Bool}
F = TypeVar("F", bound=Callable[..., Any])
RECOVERY = ("run `oncall-memory verify` to see what is damaged, and `oncall-memory restore BACKUP` to put a "
            "backup back (`oncall-memory backup PATH` makes one)")


def _engine_errors(method: F) -> F:
    """An engine failure on read or write (a truncated page, an unreadable vector) as a `StoreDamaged`
    naming the store's path and what to do, not a traceback."""

    @functools.wraps(method)
    def call(self: EdgeStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except OncallMemoryError:
            raise
        except Exception as exc:  # the engine raises a plain Exception with its own message
            raise StoreDamaged(f"the embedded store at {self.location} failed ({exc}): {RECOVERY}") from exc

    return call  # type: ignore[return-value]


_IN_USE = (
    "the embedded store at {path} is open in another process. Stop that process, "
    "or run both against a Qdrant server (QDRANT_URL)"
)


class EdgeStore(IncidentStore):
    def __init__(self, root: Path, collection: str, *, load: bool = True):
        """Open (and lock) the collection. `load=False` holds the lock without reading the shard: enough to
        restore a backup over a store too damaged to load."""
        self.collection = collection
        self._root = root
        self._path = root / collection
        self._contract_file = root / f"{collection}.contract.json"
        self.location = str(self._path)
        self._shard: E.EdgeShard | None = None
        self._lock = _hold_lock(root / f"{collection}.lock", self._path)
        try:
            if load and self.exists():
                self._shard = _load(self._path)
        except BaseException:
            self._lock.close()
            raise

    def close(self) -> None:
        self._close_shard()
        if not self._lock.closed:
            self._lock.close()  # releases the lock

    # -- contract -----------------------------------------------------------------------------

    def exists(self) -> bool:
        return self._contract_file.exists() and self._path.exists()

    def contract(self) -> dict[str, Any]:
        return json.loads(self._contract_file.read_text())

    def _create(self, contract: dict[str, Any]) -> None:
        self._root.mkdir(parents=True, exist_ok=True)
        if self._path.exists():  # a shard left by a create that never recorded its contract
            shutil.rmtree(self._path)
        config = E.EdgeConfig(
            vectors={DENSE: E.EdgeVectorParams(size=contract["dimension"], distance=E.Distance.Cosine)},
            sparse_vectors={SPARSE: E.EdgeSparseVectorParams(modifier=E.Modifier.Idf)},
        )
        shard = E.EdgeShard.create(str(self._path), config)
        for field, kind in INDEXES.items():
            shard.update(E.UpdateOperation.create_field_index(field, _INDEX_TYPES[kind]))
        # The contract is written last: a collection without one does not exist yet.
        tmp = self._contract_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(contract))
        tmp.replace(self._contract_file)
        self._shard = shard

    def expected_count(self) -> int | None:
        return self.contract().get("count") if self.exists() else None

    def record_count(self, count: int) -> None:
        contract = {**self.contract(), "count": count}
        tmp = self._contract_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(contract))
        tmp.replace(self._contract_file)

    def _close_shard(self) -> None:
        if self._shard is not None:
            self._shard.flush()
            self._shard.close()
            self._shard = None

    def drop(self) -> None:
        self._close_shard()
        self._contract_file.unlink(missing_ok=True)
        shutil.rmtree(self._path, ignore_errors=True)

    def sibling(self, collection: str) -> EdgeStore:
        return EdgeStore(self._root, collection)

    def swap_in(self, new: IncidentStore) -> None:
        """Directory renames, each atomic: the old collection is retired only once the new one is in place."""
        if not isinstance(new, EdgeStore) or new._root != self._root:
            return super().swap_in(new)
        self._close_shard()
        new._close_shard()
        retired = self._root / f"{self.collection}.retired"
        shutil.rmtree(retired, ignore_errors=True)
        if self._path.exists():
            self._path.rename(retired)
        new._path.rename(self._path)
        new._contract_file.replace(self._contract_file)
        shutil.rmtree(retired, ignore_errors=True)
        new.close()
        (self._root / f"{new.collection}.lock").unlink(missing_ok=True)
        self._shard = _load(self._path)

    @property
    def shard(self) -> E.EdgeShard:
        if self._shard is None:
            raise StoreUnavailable(f"no collection {self.collection!r} in {self.location}: run `oncall-memory ingest PATH` first")
        return self._shard

    # -- writes -------------------------------------------------------------------------------

    @_engine_errors
    def write(self, points: Sequence[StoredPoint]) -> None:
        if not points:
            return
        self.shard.update(
            E.UpdateOperation.upsert_points(
                [E.Point(p.point_id, {DENSE: p.dense, SPARSE: _sparse(p.sparse)}, p.payload) for p in points]
            )
        )

    @_engine_errors
    def replace_payloads(self, payloads: dict[str, dict[str, Any]], sparse: dict[str, Sparse] | None = None) -> None:
        for point_id, payload in payloads.items():
            self.shard.update(E.UpdateOperation.overwrite_payload([point_id], payload))
        if sparse:
            self.shard.update(E.UpdateOperation.update_vectors(
                [E.PointVectors(pid, {SPARSE: _sparse(vector)}) for pid, vector in sparse.items()]))

    # -- reads --------------------------------------------------------------------------------

    @_engine_errors
    def retrieve(self, point_ids: Sequence[str], fields: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        if not point_ids:
            return {}
        records = self.shard.retrieve(list(point_ids), with_payload=_with_payload(fields), with_vector=False)
        return {str(r.id): r.payload or {} for r in records}

    @_engine_errors
    def count(self) -> int:
        return self.shard.count(E.CountRequest(exact=True))

    def points(self, *, with_vectors: bool = False, batch: int = 256) -> Iterator[tuple[str, dict, dict | None]]:
        offset = None
        while True:
            records, offset = self._scroll(
                E.ScrollRequest(offset=offset, limit=batch, with_payload=True, with_vector=[DENSE, SPARSE] if with_vectors else False)
            )
            for r in records:
                yield str(r.id), r.payload or {}, _vectors(r.vector) if with_vectors else None
            if offset is None:
                return

    @_engine_errors
    def query(
        self,
        plan: QueryPlan,
        *,
        dense: Sequence[float] | None,
        sparse: Sparse | None,
        where: Where,
        limit: int,
        fields: Sequence[str] | None = None,
    ) -> list[Hit]:
        if not (plan.dense or plan.sparse):
            return []
        flt = to_filter(where)
        searches = []
        if plan.dense:
            searches.append(E.Query.Nearest(list(dense), using=DENSE))
        if plan.sparse:
            searches.append(E.Query.Nearest(_sparse(sparse), using=SPARSE))
        # Only the sparse vector comes back: turning 50 dense vectors into Python lists costs more than
        # asking the engine for their similarities.
        common: dict[str, Any] = dict(limit=limit, with_payload=_with_payload(fields), with_vector=[SPARSE])
        if plan.fused:
            fused = [E.Prefetch(limit=limit, query=q, filter=flt) for q in searches]
            if plan.rescore:
                request = E.QueryRequest(
                    query=searches[0],
                    prefetches=[E.Prefetch(limit=limit, query=E.Fusion.Rrf(k=RRF_K), prefetches=fused)],
                    **common,
                )
            else:
                request = E.QueryRequest(query=E.Fusion.Rrf(k=RRF_K), prefetches=fused, **common)
        else:
            request = E.QueryRequest(query=searches[0], filter=flt, **common)
        return [hit(p.id, p.score, p.payload, _sparse_of(p.vector)) for p in self.shard.query(request)]

    @_engine_errors
    def _scroll(self, request: E.ScrollRequest) -> tuple[list, Any]:
        return self.shard.scroll(request)

    @_engine_errors
    def find(self, where: Where, *, limit: int) -> list[Hit]:
        records, _ = self.shard.scroll(
            E.ScrollRequest(limit=limit, filter=to_filter(where), with_payload=True, with_vector=[SPARSE])
        )
        return [hit(r.id, 0.0, r.payload, _sparse_of(r.vector)) for r in records]

    @_engine_errors
    def values(self, field: str, *, limit: int = 1000) -> list[str]:
        response = self.shard.facet(E.FacetRequest(key=field, limit=limit))
        return [str(hit.value) for hit in response.hits]

    @_engine_errors
    def optimize(self) -> bool:
        """Build the HNSW index (blocks). Exact search is fast at the sizes measured; see the README."""
        return self.shard.optimize()


def _hold_lock(lock_path: Path, path: Path) -> IO[bytes]:
    """One owner per store, held from open to close (the engine itself locks only an existing shard)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    handle = lock_path.open("ab")
    try:
        portalocker.lock(handle, portalocker.LOCK_EX | portalocker.LOCK_NB)
    except portalocker.LockException as exc:
        handle.close()
        raise StoreUnavailable(_IN_USE.format(path=path)) from exc
    return handle


def _load(path: Path) -> E.EdgeShard:
    try:
        return E.EdgeShard.load(str(path))
    except Exception as exc:  # the engine reports a held WAL lock as a runtime error
        if "WouldBlock" in str(exc) or "lock" in str(exc).lower():
            raise StoreUnavailable(_IN_USE.format(path=path)) from exc
        raise StoreDamaged(f"cannot open the embedded store at {path} ({exc}): {RECOVERY}") from exc


def _with_payload(fields: Sequence[str] | None) -> bool | list[str]:
    return True if fields is None else (list(fields) or False)


def _sparse(vector: Sparse) -> E.SparseVector:
    return E.SparseVector(list(vector.indices), [float(v) for v in vector.values])


def _sparse_of(vector: Any) -> Any:
    return vector.get(SPARSE) if isinstance(vector, dict) else None


def _vectors(vector: Any) -> dict:
    vector = vector if isinstance(vector, dict) else {}
    sparse = vector.get(SPARSE)
    return {
        DENSE: vector.get(DENSE),
        SPARSE: Sparse(indices=list(sparse.indices), values=list(sparse.values)) if sparse is not None else None,
    }


def to_filter(where: Where) -> E.Filter | None:
    """The engine-neutral conditions as Edge's filter."""
    if not where:
        return None
    must: list[Any] = []
    for cond in where:
        if isinstance(cond, Match):
            must.append(E.FieldCondition(key=cond.key, match=E.MatchValue(cond.value)))
        elif isinstance(cond, Range):
            must.append(E.FieldCondition(key=cond.key, range=E.RangeDateTime(gte=_iso(cond.gte), lt=_iso(cond.lt))))
        elif isinstance(cond, HasId):
            must.append(E.HasIdCondition(set(cond.ids)))
        else:
            raise TypeError(f"unsupported condition for the edge store: {cond!r}")
    return E.Filter(must=must)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
