"""Qdrant Edge backend: Qdrant's own Rust engine in-process, the embedded default.

One shard per collection under `<data dir>/edge/<collection>/`, with the collection's contract
(model, dimension) beside it in `<collection>.contract.json`, since a shard has no metadata of its
own. Payload indexes are real here, so filters and exact signature look-ups do not scan.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import portalocker
import qdrant_edge as E
from qdrant_client import models

from . import payload as P
from .errors import StoreUnavailable
from .settings import Settings
from .store import DENSE, SCHEMA_VERSION, SPARSE, Hit, IncidentStore, Mode, StoredPoint, hit, query_modes

RRF_K = 2  # the same k as Qdrant's (and qdrant-client's) default, so fused orders agree across backends


class EdgeStore(IncidentStore):
    embedded = True

    def __init__(self, root: Path, collection: str):
        self.collection = collection
        self._root = root
        self._path = root / collection
        self._contract_file = root / f"{collection}.contract.json"
        self.location = str(self._path)
        self._shard: E.EdgeShard | None = None
        self._lock = _hold_lock(root / f"{collection}.lock", self._path)
        try:
            if self.exists():
                self._shard = _load(self._path)
        except BaseException:
            self._lock.close()
            raise

    @classmethod
    def open(cls, settings: Settings) -> EdgeStore:
        return cls(Path(settings.data_dir) / "edge", settings.collection)

    def close(self) -> None:
        self._close_shard()
        if not self._lock.closed:
            self._lock.close()  # releases the lock

    # -- contract -----------------------------------------------------------------------------

    def exists(self) -> bool:
        return self._contract_file.exists() and self._path.exists()

    def contract(self) -> dict[str, Any]:
        return json.loads(self._contract_file.read_text())

    def _create(self, model: str, dimension: int) -> None:
        self._root.mkdir(parents=True, exist_ok=True)
        if self._path.exists():  # a shard left by a create that never recorded its contract
            shutil.rmtree(self._path)
        config = E.EdgeConfig(
            vectors={DENSE: E.EdgeVectorParams(size=dimension, distance=E.Distance.Cosine)},
            sparse_vectors={SPARSE: E.EdgeSparseVectorParams(modifier=E.Modifier.Idf)},
        )
        shard = E.EdgeShard.create(str(self._path), config)
        for field in P.KEYWORD_FIELDS:
            shard.update(E.UpdateOperation.create_field_index(field, E.PayloadSchemaType.Keyword))
        shard.update(E.UpdateOperation.create_field_index(P.OPENED_AT, E.PayloadSchemaType.Datetime))
        shard.update(E.UpdateOperation.create_field_index(P.HAS_WORKING_FIX, E.PayloadSchemaType.Bool))
        # The contract is written last: a collection without one does not exist yet.
        tmp = self._contract_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"embed_model": model, "dimension": dimension, "schema": SCHEMA_VERSION}))
        tmp.replace(self._contract_file)
        self._shard = shard

    def _close_shard(self) -> None:
        if self._shard is not None:
            self._shard.flush()
            self._shard.close()
            self._shard = None

    def drop(self) -> None:
        """Delete the collection; this store (and its lock) stays open, ready to create it again."""
        self._close_shard()
        self._contract_file.unlink(missing_ok=True)
        shutil.rmtree(self._path, ignore_errors=True)

    def sibling(self, collection: str) -> EdgeStore:
        return EdgeStore(self._root, collection)

    @property
    def shard(self) -> E.EdgeShard:
        if self._shard is None:
            raise StoreUnavailable(f"no collection {self.collection!r} in {self.location}: run `oncall-memory ingest PATH` first")
        return self._shard

    # -- writes -------------------------------------------------------------------------------

    def stored_hashes(self, point_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        if not point_ids:
            return {}
        records = self.shard.retrieve(list(point_ids), with_payload=[P.TEXT_HASH, P.RECORD_HASH], with_vector=False)
        return {str(r.id): (r.payload.get(P.TEXT_HASH), r.payload.get(P.RECORD_HASH)) for r in records}

    def write(self, points: Sequence[StoredPoint]) -> None:
        if not points:
            return
        self.shard.update(
            E.UpdateOperation.upsert_points(
                [E.Point(p.point_id, {DENSE: p.dense, SPARSE: _sparse(p.sparse)}, p.payload) for p in points]
            )
        )

    def replace_payloads(self, payloads: dict[str, dict[str, Any]]) -> None:
        for point_id, payload in payloads.items():
            self.shard.update(E.UpdateOperation.overwrite_payload([point_id], payload))

    # -- reads --------------------------------------------------------------------------------

    def count(self) -> int:
        return self.shard.count(E.CountRequest(exact=True))

    def points(self, *, with_vectors: bool = False, batch: int = 256) -> Iterator[tuple[str, dict, dict | None]]:
        offset = None
        while True:
            records, offset = self.shard.scroll(
                E.ScrollRequest(offset=offset, limit=batch, with_payload=True, with_vector=[DENSE, SPARSE] if with_vectors else False)
            )
            for r in records:
                yield str(r.id), r.payload or {}, _vectors(r.vector) if with_vectors else None
            if offset is None:
                return

    def query(
        self,
        *,
        dense: list[float] | None,
        sparse: models.SparseVector | None,
        where: models.Filter | None,
        limit: int,
        mode: Mode,
        fields: Sequence[str] | None = None,
        rescore: bool = False,
    ) -> list[Hit]:
        use_dense, use_sparse = query_modes(dense, sparse, mode)
        if not (use_dense or use_sparse):
            return []
        flt = to_edge_filter(where)
        searches = []
        if use_dense:
            searches.append(E.Query.Nearest(dense, using=DENSE))
        if use_sparse:
            searches.append(E.Query.Nearest(_sparse(sparse), using=SPARSE))
        # Only the sparse vector comes back: turning 50 dense vectors into Python lists costs more than
        # asking the engine for their similarities (`similarities`).
        common: dict[str, Any] = dict(limit=limit, with_payload=list(fields) if fields else True, with_vector=[SPARSE])
        if len(searches) == 2:
            fused = [E.Prefetch(limit=limit, query=q, filter=flt) for q in searches]
            if rescore:  # candidates by fusion, scored by meaning: one call instead of two
                request = E.QueryRequest(
                    query=searches[0],
                    prefetches=[E.Prefetch(limit=limit, query=E.Fusion.Rrf(k=RRF_K), prefetches=fused)],
                    **common,
                )
            else:
                request = E.QueryRequest(query=E.Fusion.Rrf(k=RRF_K), prefetches=fused, **common)
        else:
            request = E.QueryRequest(query=searches[0], filter=flt, **common)
        return [hit(p.id, p.score, p.payload, p.vector) for p in self.shard.query(request)]

    def similarities(self, dense: list[float], point_ids: Sequence[str]) -> dict[str, float]:
        if not point_ids:
            return {}
        flt = E.Filter(must=[E.HasIdCondition(set(point_ids))])
        points = self.shard.query(E.QueryRequest(limit=len(point_ids), query=E.Query.Nearest(dense, using=DENSE),
                                                 filter=flt, with_payload=False, with_vector=False))
        return {str(p.id): p.score for p in points}

    def payloads(self, point_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not point_ids:
            return {}
        return {str(r.id): r.payload or {} for r in self.shard.retrieve(list(point_ids), with_payload=True, with_vector=False)}

    def signature_matches(self, key: str, *, limit: int = 10) -> list[Hit]:
        flt = E.Filter(must=[E.FieldCondition(key=P.SIGNATURE_KEY, match=E.MatchValue(key))])
        records, _ = self.shard.scroll(E.ScrollRequest(limit=limit, filter=flt, with_payload=True, with_vector=[SPARSE]))
        return [hit(r.id, 0.0, r.payload, r.vector) for r in records]

    def optimize(self) -> bool:
        """Build the HNSW index (blocks). Exact search is fast at the sizes measured; see the README."""
        return self.shard.optimize()


_IN_USE = (
    "the embedded store at {path} is open in another process. Stop that process, "
    "or run both against a Qdrant server (QDRANT_URL)"
)


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
        raise StoreUnavailable(f"cannot open the embedded store at {path}: {exc}") from exc


def _sparse(vector: models.SparseVector) -> E.SparseVector:
    return E.SparseVector(list(vector.indices), [float(v) for v in vector.values])


def _vectors(vector: Any) -> dict:
    vector = vector if isinstance(vector, dict) else {}
    sparse = vector.get(SPARSE)
    return {
        DENSE: vector.get(DENSE),
        SPARSE: models.SparseVector(indices=list(sparse.indices), values=list(sparse.values)) if sparse is not None else None,
    }


def to_edge_filter(where: models.Filter | None) -> E.Filter | None:
    """Translate the filters the retriever builds (keyword matches, datetime ranges) to Edge's types."""
    if where is None:
        return None
    must = []
    for cond in where.must or []:
        if not isinstance(cond, models.FieldCondition):
            raise ValueError(f"unsupported filter condition for the edge store: {cond!r}")
        if cond.match is not None:
            must.append(E.FieldCondition(key=cond.key, match=E.MatchValue(cond.match.value)))
        elif isinstance(cond.range, models.DatetimeRange):
            r = cond.range
            must.append(E.FieldCondition(key=cond.key, range=E.RangeDateTime(
                gte=_iso(r.gte), gt=_iso(r.gt), lte=_iso(r.lte), lt=_iso(r.lt))))
        else:
            raise ValueError(f"unsupported filter condition for the edge store: {cond!r}")
    return E.Filter(must=must)


def _iso(value: datetime | str | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value
