"""qdrant-client: a Qdrant server or cluster (`QDRANT_URL`), or the pure-Python local mode.

Local mode (`ONCALL_MEMORY_STORE=local`, `:memory:` in tests) stays for two reasons: `migrate` reads
stores written by it, and it is the second engine the congruence suite runs against on a machine
without a Qdrant server. It ignores payload indexes and checks filters point by point, so it is for
small collections; see the README's engine figures.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from qdrant_client import QdrantClient, models

from ...domain.conditions import HasId, Match, Range, Where
from ...domain.lexical import Sparse
from ...errors import OncallMemoryError, StoreDamaged, StoreUnavailable
from .base import (
    DENSE,
    INDEXES,
    SPARSE,
    Hit,
    IncidentStore,
    QueryPlan,
    StoredPoint,
    hit,
    sparse_of,
    vectors_of,
    with_payload,
)

_INDEX_TYPES = {
    "keyword": models.PayloadSchemaType.KEYWORD,
    "datetime": models.PayloadSchemaType.DATETIME,
    "bool": models.PayloadSchemaType.BOOL,
}


F = TypeVar("F", bound=Callable[..., Any])
RECOVERY = (
    "run `oncall-memory verify` to see what is damaged, and `oncall-memory restore BACKUP` to put a backup in its place"
)


def _failure(store: QdrantStore, exc: Exception) -> OncallMemoryError:
    """A client failure in the user's words: a server that does not answer is unavailable (check it and
    QDRANT_URL); local-mode files that cannot be read are damaged (verify, restore)."""
    if store._indexes:  # a server
        return StoreUnavailable(
            f"the Qdrant server at {store.location} failed ({type(exc).__name__}: {exc}): "
            "check that it runs and answers at QDRANT_URL"
        )
    return StoreDamaged(f"the local-mode store at {store.location} failed ({type(exc).__name__}: {exc}): {RECOVERY}")


def _client_errors(method: F) -> F:
    @functools.wraps(method)
    def call(self: QdrantStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except OncallMemoryError:
            raise
        except Exception as exc:
            raise _failure(self, exc) from exc

    return call  # type: ignore[return-value]


class QdrantStore(IncidentStore):
    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        *,
        location: str,
        indexes: bool,
        borrowed: bool = False,
        shards: int = 1,
        replicas: int = 1,
    ):
        self._client = client
        self._layout = dict(shard_number=shards, replication_factor=replicas) if indexes else {}
        self._borrowed = borrowed  # a sibling shares its parent's client and must not close it
        self._indexes = indexes  # local mode ignores payload indexes (and warns)
        # A server searches its graph over int8 vectors and rescores from the originals, as Edge does;
        # local mode only scans, exactly.
        self._params = (
            models.SearchParams(
                hnsw_ef=128, quantization=models.QuantizationSearchParams(rescore=True, oversampling=2.0)
            )
            if indexes
            else None
        )
        # A ranked lookup: candidates by their int8 copies, then every fused one scored by its original
        # vector (as on Edge: see `stores/edge.py`).
        self._pick = (
            models.SearchParams(hnsw_ef=128, quantization=models.QuantizationSearchParams(rescore=False))
            if indexes
            else None
        )
        self._exact = (
            models.SearchParams(quantization=models.QuantizationSearchParams(ignore=True)) if indexes else None
        )
        self.collection = collection
        self.location = location

    @classmethod
    def server(
        cls, url: str, api_key: str | None, collection: str, *, shards: int = 1, replicas: int = 1
    ) -> QdrantStore:
        return cls(
            QdrantClient(url=url, api_key=api_key),
            collection,
            location=url,
            indexes=True,
            shards=shards,
            replicas=replicas,
        )

    @classmethod
    def local(cls, path: str, collection: str) -> QdrantStore:
        """Local mode at `path` (a folder, or `:memory:`)."""
        try:
            client = QdrantClient(":memory:") if path == ":memory:" else QdrantClient(path=path)
        except RuntimeError as exc:  # local mode's "already accessed by another instance"
            raise StoreUnavailable(
                f"the embedded store at {path} is open in another process ({exc}). Stop that process, "
                "or run both against a Qdrant server (QDRANT_URL)"
            ) from exc
        store = cls(client, collection, location=path, indexes=False)
        store.disk_path = None if path == ":memory:" else Path(path)
        return store

    def close(self) -> None:
        if not self._borrowed:
            self._client.close()

    # -- the collection contract -------------------------------------------------------------

    def exists(self) -> bool:
        return self._client.collection_exists(self.collection)

    def contract(self) -> dict[str, Any]:
        info = self._client.get_collection(self.collection)
        meta = dict(info.config.metadata or {})
        params = info.config.params.vectors
        if isinstance(params, dict) and DENSE in params:
            meta.setdefault("dimension", params[DENSE].size)
        return meta

    def _create(self, contract: dict[str, Any]) -> None:
        self._client.create_collection(self.collection, **collection_config(contract, self._indexes, **self._layout))
        if self._indexes:
            for field, kind in INDEXES.items():
                self._client.create_payload_index(self.collection, field, _INDEX_TYPES[kind])

    def sibling(self, collection: str) -> QdrantStore:
        # Same client: a local-mode path can be opened once per process.
        return QdrantStore(
            self._client,
            collection,
            location=self.location,
            indexes=self._indexes,
            borrowed=True,
            shards=self._layout.get("shard_number", 1),
            replicas=self._layout.get("replication_factor", 1),
        )

    def drop(self) -> None:
        self._client.delete_collection(self.collection)

    # -- writes ------------------------------------------------------------------------------

    def write(self, points: Sequence[StoredPoint]) -> None:
        if not points:
            return
        self._client.upsert(
            self.collection,
            points=[
                models.PointStruct(
                    id=p.point_id, vector={DENSE: list(p.dense), SPARSE: _sparse(p.sparse)}, payload=p.payload
                )
                for p in points
            ],
            wait=True,
        )

    def replace_payloads(self, payloads: dict[str, dict[str, Any]], sparse: dict[str, Sparse] | None = None) -> None:
        if not payloads:
            return
        operations: list[Any] = [
            models.OverwritePayloadOperation(overwrite_payload=models.SetPayload(payload=payload, points=[point_id]))
            for point_id, payload in payloads.items()
        ]
        if sparse:
            operations.append(
                models.UpdateVectorsOperation(
                    update_vectors=models.UpdateVectors(
                        points=[
                            models.PointVectors(id=pid, vector={SPARSE: _sparse(vector)})
                            for pid, vector in sparse.items()
                        ]
                    )
                )
            )
        self._client.batch_update_points(self.collection, operations, wait=True)

    # -- reads -------------------------------------------------------------------------------

    def retrieve(self, point_ids: Sequence[str], fields: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        if not point_ids:
            return {}
        records = self._client.retrieve(
            self.collection, ids=list(point_ids), with_payload=with_payload(fields), with_vectors=False
        )
        return {str(r.id): r.payload or {} for r in records}

    def count(self) -> int:
        return self._client.count(self.collection, exact=True).count

    def points(self, *, with_vectors: bool = False, batch: int = 256) -> Iterator[tuple[str, dict, dict | None]]:
        offset = None
        while True:
            try:
                records, offset = self._client.scroll(
                    self.collection, limit=batch, offset=offset, with_payload=True, with_vectors=with_vectors
                )
            except Exception as exc:
                raise _failure(self, exc) from exc
            for r in records:
                yield str(r.id), r.payload or {}, vectors_of(r.vector) if with_vectors else None
            if offset is None:
                return

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
        flt = to_filter(where)
        common: dict[str, Any] = dict(limit=limit, with_payload=with_payload(fields), with_vectors=False)
        if plan.fused:
            fused = [
                models.Prefetch(
                    query=list(dense),
                    using=DENSE,
                    filter=flt,
                    limit=limit,
                    params=self._pick if plan.rescore else self._params,
                ),
                models.Prefetch(query=_sparse(sparse), using=SPARSE, filter=flt, limit=limit),
            ]
            fusion = models.FusionQuery(fusion=models.Fusion.RRF)
            if plan.rescore:
                response = self._client.query_points(
                    self.collection,
                    prefetch=[models.Prefetch(prefetch=fused, query=fusion, limit=limit)],
                    query=list(dense),
                    using=DENSE,
                    search_params=self._exact,
                    **common,
                )
            else:
                response = self._client.query_points(self.collection, prefetch=fused, query=fusion, **common)
        else:
            response = self._client.query_points(
                self.collection,
                query=list(dense) if plan.dense else _sparse(sparse),
                using=DENSE if plan.dense else SPARSE,
                query_filter=flt,
                search_params=self._params if plan.dense else None,
                **common,
            )
        return [hit(p.id, p.score, p.payload, None) for p in response.points]

    def values(self, field: str, *, limit: int = 1000) -> list[str]:
        return [str(hit.value) for hit in self._client.facet(self.collection, key=field, limit=limit).hits]

    def find(self, where: Where, *, limit: int) -> list[Hit]:
        records, _ = self._client.scroll(
            self.collection, scroll_filter=to_filter(where), limit=limit, with_payload=True, with_vectors=[SPARSE]
        )
        return [hit(r.id, 0.0, r.payload, sparse_of(r.vector)) for r in records]


def collection_config(
    contract: dict[str, Any], server: bool, *, shard_number: int = 1, replication_factor: int = 1
) -> dict[str, Any]:
    """`create_collection`'s arguments for an incidents collection. On a server (or cluster): the same index
    as Edge's, built by the server's own optimizers, int8 copies of the vectors in RAM and the originals on
    disk, spread over `shard_number` shards of `replication_factor` copies each. Local mode only scans."""
    index: dict[str, Any] = {}
    if server:
        index = dict(
            hnsw_config=models.HnswConfigDiff(m=16, ef_construct=100),
            quantization_config=_quantization(contract.get("quantization", "int8")),
            # In RAM, as on Edge: a lookup reads the ranking fields of 50 scattered candidates.
            on_disk_payload=False,
            shard_number=shard_number,
            replication_factor=replication_factor,
        )
    return dict(
        vectors_config={
            DENSE: models.VectorParams(
                size=contract["dimension"], distance=models.Distance.COSINE, on_disk=True if server else None
            )
        },
        sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        metadata=contract,
        **index,
    )


def _quantization(name: str) -> models.ScalarQuantization | models.TurboQuantization:
    """The server's copy of the embedded store's choice (`edge_layout.QUANTIZATIONS`), kept in RAM."""
    if name == "int8":
        return models.ScalarQuantization(
            scalar=models.ScalarQuantizationConfig(type=models.ScalarType.INT8, quantile=0.99, always_ram=True)
        )
    bits = {
        "turbo4": models.TurboQuantBitSize.BITS4,
        "turbo2": models.TurboQuantBitSize.BITS2,
        "turbo1": models.TurboQuantBitSize.BITS1,
    }[name]
    return models.TurboQuantization(turbo=models.TurboQuantQuantizationConfig(bits=bits, always_ram=True))


def _sparse(vector: Sparse) -> models.SparseVector:
    return models.SparseVector(indices=list(vector.indices), values=list(vector.values))


def to_filter(where: Where) -> models.Filter | None:
    """The engine-neutral conditions as a qdrant-client filter."""
    if not where:
        return None
    must: list[models.Condition] = []
    for cond in where:
        if isinstance(cond, Match):
            must.append(models.FieldCondition(key=cond.key, match=models.MatchValue(value=cond.value)))
        elif isinstance(cond, Range):
            must.append(models.FieldCondition(key=cond.key, range=models.DatetimeRange(gte=cond.gte, lt=cond.lt)))
        elif isinstance(cond, HasId):
            must.append(models.HasIdCondition(has_id=list(cond.ids)))
        else:
            raise TypeError(f"unsupported condition: {cond!r}")
    return models.Filter(must=must)


# Every call that reaches the client speaks in the user's words when it fails (`points` does so itself).
for _name in (
    "exists",
    "contract",
    "_create",
    "drop",
    "write",
    "replace_payloads",
    "retrieve",
    "count",
    "query",
    "values",
    "find",
):
    setattr(QdrantStore, _name, _client_errors(getattr(QdrantStore, _name)))
