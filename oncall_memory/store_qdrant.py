"""qdrant-client backend: a Qdrant server or cluster (`QDRANT_URL`), or the pure-Python local mode."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

from . import payload as P
from .errors import StoreUnavailable
from .settings import Settings
from .store import DENSE, SCHEMA_VERSION, SPARSE, Hit, IncidentStore, Mode, StoredPoint, hit, query_modes

log = logging.getLogger(__name__)


class QdrantStore(IncidentStore):
    def __init__(self, client: QdrantClient, collection: str, *, embedded: bool, location: str, borrowed: bool = False):
        self._client = client
        self._borrowed = borrowed  # a sibling shares its parent's client and must not close it
        self.collection = collection
        self.embedded = embedded
        self.location = location
        # Embedded mode scans every point for a payload filter, so exact signature look-ups use an
        # in-process map instead. Safe because an embedded store has exactly one (this) writer.
        self._signatures: dict[str, str | None] | None = None  # point id -> signature key

    @classmethod
    def open(cls, settings: Settings) -> QdrantStore:
        """Open the store the settings name: a Qdrant server (`QDRANT_URL`) or the embedded local mode."""
        location = settings.store_location
        try:
            if settings.qdrant_url:
                key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
                client = QdrantClient(url=settings.qdrant_url, api_key=key)
                return cls(client, settings.collection, embedded=False, location=location)
            if location == ":memory:":
                return cls(QdrantClient(":memory:"), settings.collection, embedded=True, location=location)
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            client = QdrantClient(path=location)
        except RuntimeError as exc:  # local mode's "already accessed by another instance"
            raise StoreUnavailable(
                f"the embedded store at {location} is open in another process ({exc}). Stop that process, "
                "or run both against a Qdrant server (QDRANT_URL)"
            ) from exc
        return cls(client, settings.collection, embedded=True, location=location)

    def close(self) -> None:
        if not self._borrowed:
            self._client.close()

    # -- the collection contract -------------------------------------------------------------

    def exists(self) -> bool:
        return self._client.collection_exists(self.collection)

    def contract(self) -> dict[str, Any]:
        """The model and dimension the collection was built with."""
        info = self._client.get_collection(self.collection)
        meta = dict(info.config.metadata or {})
        params = info.config.params.vectors
        if isinstance(params, dict) and DENSE in params:
            meta.setdefault("dimension", params[DENSE].size)
        return meta

    def _create(self, model: str, dimension: int) -> None:
        self._client.create_collection(
            self.collection,
            vectors_config={DENSE: models.VectorParams(size=dimension, distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata={"embed_model": model, "dimension": dimension, "schema": SCHEMA_VERSION},
        )
        self._create_indexes()
        self._signatures = {}

    def sibling(self, collection: str) -> QdrantStore:
        # Same client: a local-mode path can be opened once per process.
        return QdrantStore(self._client, collection, embedded=self.embedded, location=self.location, borrowed=True)

    def drop(self) -> None:
        self._client.delete_collection(self.collection)
        self._signatures = None

    def _create_indexes(self) -> None:
        if self.embedded:
            return  # local mode ignores payload indexes (and warns); filters work without them
        for field in P.KEYWORD_FIELDS:
            self._client.create_payload_index(self.collection, field, models.PayloadSchemaType.KEYWORD)
        self._client.create_payload_index(self.collection, P.OPENED_AT, models.PayloadSchemaType.DATETIME)
        self._client.create_payload_index(self.collection, P.HAS_WORKING_FIX, models.PayloadSchemaType.BOOL)

    # -- writes ------------------------------------------------------------------------------

    def stored_hashes(self, point_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(text_hash, record_hash) of each id already stored; ids not stored are absent."""
        if not point_ids:
            return {}
        records = self._client.retrieve(
            self.collection, ids=list(point_ids), with_payload=[P.TEXT_HASH, P.RECORD_HASH], with_vectors=False
        )
        return {str(r.id): (r.payload.get(P.TEXT_HASH), r.payload.get(P.RECORD_HASH)) for r in records}

    def write(self, points: Sequence[StoredPoint]) -> None:
        """Upsert whole points: both vectors and the whole payload, always together."""
        if not points:
            return
        self._remember_signatures({p.point_id: p.payload for p in points})
        self._client.upsert(
            self.collection,
            points=[
                models.PointStruct(id=p.point_id, vector={DENSE: p.dense, SPARSE: p.sparse}, payload=p.payload)
                for p in points
            ],
            wait=True,
        )

    def replace_payloads(self, payloads: dict[str, dict[str, Any]]) -> None:
        """Replace the payload of points whose text (and so vectors) did not change."""
        if not payloads:
            return
        self._remember_signatures(payloads)
        self._client.batch_update_points(
            self.collection,
            [
                models.OverwritePayloadOperation(
                    overwrite_payload=models.SetPayload(payload=payload, points=[point_id])
                )
                for point_id, payload in payloads.items()
            ],
            wait=True,
        )

    # -- reads -------------------------------------------------------------------------------

    def count(self) -> int:
        return self._client.count(self.collection, exact=True).count

    def points(self, *, with_vectors: bool = False, batch: int = 256) -> Iterator[tuple[str, dict, dict | None]]:
        offset = None
        while True:
            records, offset = self._client.scroll(
                self.collection, limit=batch, offset=offset, with_payload=True, with_vectors=with_vectors
            )
            for r in records:
                yield str(r.id), r.payload, r.vector if with_vectors else None
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
        common: dict[str, Any] = dict(limit=limit, with_payload=list(fields) if fields else True, with_vectors=[SPARSE])
        if use_dense and use_sparse:
            fused = [
                models.Prefetch(query=dense, using=DENSE, filter=where, limit=limit),
                models.Prefetch(query=sparse, using=SPARSE, filter=where, limit=limit),
            ]
            fusion = models.FusionQuery(fusion=models.Fusion.RRF)
            if rescore:  # candidates by fusion, scored by meaning: one call instead of two
                response = self._client.query_points(
                    self.collection, prefetch=[models.Prefetch(prefetch=fused, query=fusion, limit=limit)],
                    query=dense, using=DENSE, **common,
                )
            else:
                response = self._client.query_points(self.collection, prefetch=fused, query=fusion, **common)
        else:
            response = self._client.query_points(
                self.collection,
                query=dense if use_dense else sparse,
                using=DENSE if use_dense else SPARSE,
                query_filter=where,
                **common,
            )
        return [hit(p.id, p.score, p.payload, p.vector) for p in response.points]

    def similarities(self, dense: list[float], point_ids: Sequence[str]) -> dict[str, float]:
        if not point_ids:
            return {}
        if self.embedded:
            # Local mode checks an id filter point by point; fetching 50 vectors by id is direct.
            records = self._client.retrieve(self.collection, ids=list(point_ids), with_payload=False, with_vectors=[DENSE])
            matrix = np.asarray([r.vector[DENSE] for r in records], dtype=np.float32)
            query = np.asarray(dense, dtype=np.float32)
            norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(query) or 1.0)
            cosines = (matrix @ query) / np.where(norms == 0, 1.0, norms)
            return {str(r.id): float(c) for r, c in zip(records, cosines)}
        response = self._client.query_points(
            self.collection, query=dense, using=DENSE, limit=len(point_ids), with_payload=False,
            query_filter=models.Filter(must=[models.HasIdCondition(has_id=list(point_ids))]),
        )
        return {str(p.id): p.score for p in response.points}

    def payloads(self, point_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not point_ids:
            return {}
        records = self._client.retrieve(self.collection, ids=list(point_ids), with_payload=True, with_vectors=False)
        return {str(r.id): r.payload or {} for r in records}

    def signature_matches(self, key: str, *, limit: int = 10) -> list[Hit]:
        if not self.embedded:  # the server answers from its keyword index
            must = [models.FieldCondition(key=P.SIGNATURE_KEY, match=models.MatchValue(value=key))]
            return self.find(models.Filter(must=must), limit=limit)
        ids = [pid for pid, k in self._signature_map().items() if k == key][:limit]
        if not ids:
            return []
        records = self._client.retrieve(self.collection, ids=ids, with_payload=True, with_vectors=[SPARSE])
        return [hit(r.id, 0.0, r.payload, r.vector) for r in records]

    def _signature_map(self) -> dict[str, str | None]:
        if self._signatures is None:
            self._signatures = {}
            offset = None
            while self.exists():
                records, offset = self._client.scroll(
                    self.collection, limit=1024, offset=offset, with_payload=[P.SIGNATURE_KEY], with_vectors=False
                )
                self._signatures.update({str(r.id): (r.payload or {}).get(P.SIGNATURE_KEY) for r in records})
                if offset is None:
                    break
        return self._signatures

    def _remember_signatures(self, payloads: dict[str, dict[str, Any]]) -> None:
        if self._signatures is not None:
            self._signatures.update({pid: payload.get(P.SIGNATURE_KEY) for pid, payload in payloads.items()})

    def find(self, where: models.Filter, *, limit: int) -> list[Hit]:
        """Points matching `where` exactly, without a vector search (score 0)."""
        records, _ = self._client.scroll(
            self.collection, scroll_filter=where, limit=limit, with_payload=True, with_vectors=[SPARSE]
        )
        return [hit(r.id, 0.0, r.payload, r.vector) for r in records]
