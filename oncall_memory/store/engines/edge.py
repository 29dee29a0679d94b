"""Qdrant Edge: Qdrant's own Rust engine in-process, the embedded default.

One shard per collection under `<data dir>/edge/<collection>/`, with the collection's contract
(model, dimension, schema) beside it in `<collection>.contract.json`, since a shard has no metadata
of its own. Payload indexes are real here, so filters and exact signature look-ups do not scan.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as E

from ...datadir import write_atomic
from ...domain import payload as P
from ...domain.conditions import HasId, Where
from ...domain.lexical import Sparse
from ...errors import NothingStored, StoreDamaged
from ..mapped_pages import AfterEachRead
from ..ranking_table import RankingTable
from .base import (
    DENSE,
    INDEXES,
    SPARSE,
    BuildsIndex,
    Hit,
    IncidentStore,
    QueryPlan,
    StoredPoint,
    hit,
    no_collection,
    reciprocal_rank,
    sparse_of,
    vectors_of,
    with_payload,
)
from .edge_build import BuildsBeside
from .edge_filters import _sparse, _ties_by_id, to_filter
from .edge_layout import (
    CANDIDATE_SEARCH,
    EXACT_SCORES,
    INDEX_SUFFIX,
    INDEXED_SEARCH,
    KEEP_MAPPED_BYTES,
    SKIPPED,
    _engine_errors,
    _index_params,
    _load,
    _on_disk,
    _quantized,
    edge_config,
)
from .edge_lock import hold_lock
from .edge_table import RankingFieldsInMemory


class EdgeStore(BuildsBeside, RankingFieldsInMemory, IncidentStore, BuildsIndex):
    def __init__(
        self,
        root: Path,
        collection: str,
        *,
        load: bool = True,
        payload_on_disk: bool = False,
        quantization: str = "int8",
    ):
        """Open (and lock) the collection. `load=False` holds the lock without reading the shard: enough to
        restore a backup over a store too damaged to load. `payload_on_disk` and `quantization`: where a
        collection created here keeps its payload and how it quantizes its vectors (one already there keeps
        its own choices, recorded in its contract)."""
        self.collection = collection
        self._payload_on_disk = payload_on_disk
        self._quantization = quantization
        self._table: RankingTable | None = None  # see `fill_ranking_table`
        self._table_ready = False
        self._table_offset: Any = None
        self._released = 0.0  # when the payload pages were last let go of (monotonic)
        self._root = root
        self._path = root / collection
        # The original vectors' mapped pages, let go of after each lookup that scored by them (see AfterEachRead).
        self._let_go_originals = AfterEachRead(self._path, f"vector_storage-{DENSE}", skip=SKIPPED)
        self._contract_file = root / f"{collection}.contract.json"
        self.location = str(self._path)
        self.disk_path = self._path
        self._shard: E.EdgeShard | None = None
        self._payload_disk = False  # the open collection's payload is on disk (its contract says)
        self._indexed = 0  # points the vector index covers (see `index_state`)
        self._vector_bytes = 0  # the size of one original vector (see `_read_originals`)
        self._written_since: set[str] | None = None  # ids written while an index build runs on a copy
        self._lock = hold_lock(root / f"{collection}.lock", self._path)
        # A copy left by an index build that was killed: nobody builds while we hold the lock.
        shutil.rmtree(root / f"{collection}{INDEX_SUFFIX}", ignore_errors=True)
        try:
            if load and self.exists():
                self._open_shard()
        except BaseException:
            self._lock.close()
            raise

    def close(self) -> None:
        self._close_shard()
        self._forget_table()
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
        if self._payload_on_disk:
            contract = {**contract, "payload": "disk"}
        if self._quantization != "int8" and "quantization" not in contract:
            contract = {**contract, "quantization": self._quantization}
        shard = E.EdgeShard.create(str(self._path), self._config(contract))
        for field, kind in INDEXES.items():
            shard.update(E.UpdateOperation.create_field_index(field, _index_params(field, kind, contract)))
        # The contract is written last: a collection without one does not exist yet.
        write_atomic(self._contract_file, json.dumps(contract))
        self._shard, self._payload_disk = shard, _on_disk(contract)
        self._vector_bytes = 4 * int(contract.get("dimension", 0))

    def expected_count(self) -> int | None:
        return self.contract().get("count") if self.exists() else None

    def record_count(self, count: int) -> None:
        self._update_contract(count=count)

    def _update_contract(self, **fields: Any) -> None:
        write_atomic(self._contract_file, json.dumps({**self.contract(), **fields}))

    def _config(self, contract: dict[str, Any] | None = None) -> E.EdgeConfig:
        contract = contract or self.contract()
        return edge_config(contract["dimension"], payload_on_disk=_on_disk(contract), quantization=_quantized(contract))

    def _open_shard(self) -> None:
        # Loading with today's config upgrades a store made by an older version: its next index build
        # quantizes and moves the vectors to disk.
        contract = self.contract()
        self._shard = _load(self._path, self._config(contract))
        self._payload_disk = _on_disk(contract)  # read once: the service's table thread asks every 5 s
        self._indexed = contract.get("indexed", 0)
        self._vector_bytes = 4 * int(contract.get("dimension", 0))  # an original vector, float32

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
        """Another collection beside this one (a reindex's), with this one's payload layout and quantization."""
        on_disk, quantization = self._payload_on_disk, self._quantization
        try:
            if self.exists():
                contract = self.contract()
                on_disk, quantization = on_disk or _on_disk(contract), _quantized(contract)
        except (OSError, ValueError, StoreDamaged):  # a contract too damaged to read (a restore over it comes next)
            pass
        return EdgeStore(self._root, collection, payload_on_disk=on_disk, quantization=quantization)

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
        self._open_shard()
        self._forget_table()  # another collection now: its ranking fields are read afresh

    @property
    def shard(self) -> E.EdgeShard:
        if self._shard is None:
            raise NothingStored(no_collection(self.collection, self.location))
        return self._shard

    # -- writes -------------------------------------------------------------------------------

    @_engine_errors
    def write(self, points: Sequence[StoredPoint]) -> None:
        if not points:
            return
        if self._written_since is not None:
            self._written_since.update(p.point_id for p in points)
        self.shard.update(
            E.UpdateOperation.upsert_points(
                [E.Point(p.point_id, {DENSE: p.dense, SPARSE: _sparse(p.sparse)}, p.payload) for p in points]
            )
        )
        if self._table is not None:
            for p in points:
                self._table.put(p.point_id, p.payload)

    @_engine_errors
    def replace_payloads(self, payloads: dict[str, dict[str, Any]], sparse: dict[str, Sparse] | None = None) -> None:
        if self._written_since is not None:
            self._written_since.update(payloads)
        for point_id, payload in payloads.items():
            self.shard.update(E.UpdateOperation.overwrite_payload([point_id], payload))
            if self._table is not None:
                self._table.put(point_id, payload)
        if sparse:
            self.shard.update(
                E.UpdateOperation.update_vectors(
                    [E.PointVectors(pid, {SPARSE: _sparse(vector)}) for pid, vector in sparse.items()]
                )
            )

    # -- reads --------------------------------------------------------------------------------

    @_engine_errors
    def retrieve(self, point_ids: Sequence[str], fields: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        if not point_ids:
            return {}
        records = self.shard.retrieve(list(point_ids), with_payload=with_payload(fields), with_vector=False)
        return {str(r.id): r.payload or {} for r in records}

    @_engine_errors
    def count(self) -> int:
        return self.shard.count(E.CountRequest(exact=True))

    def points(self, *, with_vectors: bool = False, batch: int = 256) -> Iterator[tuple[str, dict, dict | None]]:
        offset = None
        while True:
            records, offset = self._scroll(
                E.ScrollRequest(
                    offset=offset,
                    limit=batch,
                    with_payload=True,
                    with_vector=[DENSE, SPARSE] if with_vectors else False,
                )
            )
            for r in records:
                yield str(r.id), r.payload or {}, vectors_of(r.vector) if with_vectors else None
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
        dense, sparse = dense or [], sparse or Sparse([], [])  # the plan uses only what it was given
        if plan.fused:
            return self._fused(plan, dense, sparse, where, limit, fields)[0]
        flt = to_filter(where)
        search = (
            E.Query.Nearest(list(dense), using=DENSE) if plan.dense else E.Query.Nearest(_sparse(sparse), using=SPARSE)
        )
        # Below the threshold every search is exact, and says so: the engine quantizes a TurboQuant collection
        # as it is written, and left to its defaults an exact search scored by those copies (0.9967 for 1.0).
        params = (INDEXED_SEARCH if self._indexed else EXACT_SCORES) if plan.dense else None
        tabled = self._tabled(fields)
        found = self.shard.query(
            E.QueryRequest(
                query=search,
                filter=flt,
                params=params,
                limit=limit,
                with_payload=False if tabled else with_payload(fields),
                with_vector=False,
            )
        )
        if plan.dense:
            self._read_originals()
        return self._hits([(str(p.id), p.score, p.payload) for p in found], fields, tabled)

    @_engine_errors
    def hybrid(
        self, *, dense: Sequence[float], sparse: Sparse, where: Where, limit: int, fields: Sequence[str] | None = None
    ) -> tuple[list[Hit], list[Hit]]:
        return self._fused(QueryPlan(dense=True, sparse=True, rescore=True), dense, sparse, where, limit, fields)

    def _fused(
        self,
        plan: QueryPlan,
        dense: Sequence[float],
        sparse: Sparse,
        where: Where,
        limit: int,
        fields: Sequence[str] | None,
    ) -> tuple[list[Hit], list[Hit]]:
        """Both searches, fused by reciprocal rank here, and the word search's own hits. Edge's own fusion of
        the same two searches (prefetches under an Rrf query) took 5.8 ms at 100,000 incidents where the two
        searches apart took 2.5, and a ranked lookup asked the word search a second time for its scores."""
        flt = to_filter(where)
        bare: dict[str, Any] = dict(filter=flt, limit=limit, with_payload=False, with_vector=False)
        # A ranked lookup picks its dense candidates by their quantized copies alone and then scores every
        # fused candidate by its original vector; an unranked one keeps the dense search's rescored order.
        pick = (CANDIDATE_SEARCH if plan.rescore else INDEXED_SEARCH) if self._indexed else EXACT_SCORES
        meaning = E.Query.Nearest(list(dense), using=DENSE)  # asked twice: for candidates, then their scores
        # Equal scores in the order of their ids: the engine returns ties in the order its segments hold them,
        # which differs from one build of the same incidents to the next, and the fused ranks followed.
        by_meaning = _ties_by_id(self.shard.query(E.QueryRequest(query=meaning, params=pick, **bare)))
        by_words = _ties_by_id(
            self.shard.query(E.QueryRequest(query=E.Query.Nearest(_sparse(sparse), using=SPARSE), **bare))
        )
        words = [hit(i, score, None, None) for i, score in by_words]
        fused = reciprocal_rank([[i for i, _ in by_meaning], [i for i, _ in by_words]], limit)
        tabled = self._tabled(fields)
        if not plan.rescore:
            self._read_originals()  # the dense search rescored its candidates by them
            payloads = {} if tabled or not fused else self.retrieve([i for i, _ in fused], fields)
            return self._hits([(i, score, payloads.get(i)) for i, score in fused], fields, tabled), words
        if not fused:
            return [], words
        # Every fused candidate scored by its original vector: one exact search over just those points.
        scored = self.shard.query(
            E.QueryRequest(
                query=meaning,
                filter=to_filter([HasId(frozenset(i for i, _ in fused))]),
                params=EXACT_SCORES,
                limit=len(fused),
                with_payload=False if tabled else with_payload(fields),
                with_vector=False,
            )
        )
        self._read_originals()
        return self._hits([(str(p.id), p.score, p.payload) for p in scored], fields, tabled), words

    def _read_originals(self) -> None:
        """After a search that scored by the original vectors: let go of their mapped pages (`AfterEachRead`),
        unless the collection has no vector index yet and its originals are small (`KEEP_MAPPED_BYTES`). An
        exact search reads them all again at the next lookup, and mapping them back each time cost 9 ms of a
        24 ms lookup at 7,000 incidents of 1,536 dims (`python -m bench.perf.originals`)."""
        if not self._indexed:  # counted only then: 0.03 ms a lookup
            originals = self.shard.count(E.CountRequest(exact=False)) * self._vector_bytes  # 0: not known, let go
            if 0 < originals <= KEEP_MAPPED_BYTES:
                return
        self._let_go_originals()

    def _tabled(self, fields: Sequence[str] | None) -> bool:
        """Whether a search's ranking fields are read from the table in memory rather than the payload."""
        return self._table_ready and fields is not None and tuple(fields) == P.RANKING_FIELDS

    def _hits(
        self, found: list[tuple[str, float, dict | None]], fields: Sequence[str] | None, tabled: bool
    ) -> list[Hit]:
        # No vector comes back: a candidate's words ride in its payload (`terms`); reading 50 sparse vectors
        # from their store cost 2.5 ms of a first-time lookup at 100,000 incidents.
        if not tabled:
            return [hit(i, score, payload, None) for i, score, payload in found]
        assert self._table is not None  # tabled
        ids = [i for i, _, _ in found]
        payloads = self._table.get_many(ids)
        if missing := [i for i in ids if i not in payloads]:  # not expected: every write passes through here
            payloads.update(self.retrieve(missing, fields))
        return [hit(i, score, payloads.get(i), None) for i, score, _ in found]

    def rescored_files(self) -> list[Path]:
        # The originals (`matrix.dat` of an indexed segment, chunks under `vectors/` of the others), not the
        # quantized copies beside them (pinned in RAM) or the flags of deleted points.
        found = (self._path / "segments").glob(f"*/vector_storage-{DENSE}/**/*")
        return sorted(p for p in found if p.is_file() and not any(w in "/".join(p.parts[-2:]) for w in SKIPPED))

    @_engine_errors
    def _scroll(self, request: E.ScrollRequest) -> tuple[list, Any]:
        return self.shard.scroll(request)

    @_engine_errors
    def find(self, where: Where, *, limit: int) -> list[Hit]:
        records, _ = self.shard.scroll(
            E.ScrollRequest(limit=limit, filter=to_filter(where), with_payload=True, with_vector=[SPARSE])
        )
        return [hit(r.id, 0.0, r.payload, sparse_of(r.vector)) for r in records]

    @_engine_errors
    def values(self, field: str, *, limit: int = 1000) -> list[str]:
        response = self.shard.facet(E.FacetRequest(key=field, limit=limit))
        return [str(hit.value) for hit in response.hits]
