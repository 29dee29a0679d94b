"""The incident store: one small interface, with a backend per engine.

- `edge` (the embedded default): Qdrant Edge, Qdrant's Rust engine in-process (`store_edge.py`).
- `local`: qdrant-client's local mode, pure Python (`store_qdrant.py`); `:memory:` for tests.
- a Qdrant server or cluster when `QDRANT_URL` is set (`store_qdrant.py`).

A point holds two vectors computed from the same distilled text, a dense one for meaning and a
sparse one for words (hybrid search), and the whole incident as payload. The collection records the
embedding model and dimension it was built with: that is its contract.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from qdrant_client import models

from .errors import ContractMismatch, StoreUnavailable

DENSE = "meaning"
SPARSE = "words"
SCHEMA_VERSION = 1

Mode = Literal["hybrid", "dense", "lexical"]


@dataclass(frozen=True)
class StoredPoint:
    point_id: str
    dense: list[float]
    sparse: models.SparseVector
    payload: dict[str, Any]


@dataclass(frozen=True)
class Hit:
    point_id: str
    score: float
    payload: dict[str, Any]
    terms: frozenset[int] = frozenset()  # indices of the point's sparse vector: which words it has


def hit(point_id: Any, score: float, payload: dict | None, vectors: Any) -> Hit:
    """A Hit from any engine's point: its id as text, and the words of its sparse vector if returned."""
    sparse = vectors.get(SPARSE) if isinstance(vectors, dict) else None
    return Hit(
        point_id=str(point_id),
        score=score,
        payload=payload or {},
        terms=frozenset(sparse.indices) if sparse is not None else frozenset(),
    )


class IncidentStore(ABC):
    collection: str
    location: str
    embedded: bool

    # -- the collection contract ------------------------------------------------------------

    @abstractmethod
    def exists(self) -> bool: ...

    @abstractmethod
    def contract(self) -> dict[str, Any]:
        """The model and dimension the collection was built with."""

    @abstractmethod
    def _create(self, model: str, dimension: int) -> None: ...

    def ensure_collection(self, model: str, dimension: int) -> None:
        """Create the collection for this embedder on first use; afterwards check it was built with it."""
        if not self.exists():
            self._create(model, dimension)
            return
        self.check_contract(model, dimension)

    def check_contract(self, model: str, dimension: int) -> None:
        """Raise `StoreUnavailable` if there is no collection, `ContractMismatch` if it was built otherwise."""
        if not self.exists():
            raise StoreUnavailable(
                f"no collection {self.collection!r} in {self.location}: run `oncall-memory ingest PATH` first"
            )
        built = self.contract()
        if built.get("embed_model") != model or built.get("dimension") != dimension:
            raise ContractMismatch(
                f"collection {self.collection!r} was built with model {built.get('embed_model')} "
                f"({built.get('dimension')} dims); this embedder is {model} ({dimension} dims). "
                f"Run `oncall-memory reindex` to rebuild it with this model, or configure the original one "
                f"(ONCALL_MEMORY_EMBEDDER / ONCALL_MEMORY_EMBED_MODEL)"
            )

    # -- writes and reads -------------------------------------------------------------------

    @abstractmethod
    def stored_hashes(self, point_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(text_hash, record_hash) of each id already stored; ids not stored are absent."""

    @abstractmethod
    def write(self, points: Sequence[StoredPoint]) -> None:
        """Upsert whole points: both vectors and the whole payload, always together."""

    @abstractmethod
    def replace_payloads(self, payloads: dict[str, dict[str, Any]]) -> None:
        """Replace the payload of points whose text (and so vectors) did not change."""

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def points(self, *, with_vectors: bool = False, batch: int = 256) -> Iterator[tuple[str, dict, dict | None]]:
        """Every stored point as (id, payload, vectors), vectors as {DENSE: [...], SPARSE: SparseVector}."""

    @abstractmethod
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
        """Nearest incidents under `where`, by meaning, by words, or both fused by reciprocal rank (k=2).

        With `rescore`, the fused candidates come back scored by cosine similarity of meaning instead of
        their fused rank (one engine call for both). Hits carry the payload `fields` (all when None) and
        the sparse vector's terms, no dense vector.
        """

    @abstractmethod
    def similarities(self, dense: list[float], point_ids: Sequence[str]) -> dict[str, float]:
        """Cosine similarity of `dense` to each of these points, computed by the engine."""

    @abstractmethod
    def payloads(self, point_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The whole payload of each of these points."""

    @abstractmethod
    def signature_matches(self, key: str, *, limit: int = 10) -> list[Hit]:
        """Incidents whose canonical signature is exactly `key` (score 0), without a vector search."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def drop(self) -> None:
        """Delete the collection (reindex uses it on its temporary collection)."""

    @abstractmethod
    def sibling(self, collection: str) -> IncidentStore:
        """Another collection in the same place, through the same engine handle where there is one."""


def query_modes(dense: list[float] | None, sparse: models.SparseVector | None, mode: Mode) -> tuple[bool, bool]:
    """Which of the two searches a query can run, given the vectors it has."""
    use_dense = dense is not None and mode in ("hybrid", "dense")
    use_sparse = sparse is not None and bool(sparse.indices) and mode in ("hybrid", "lexical")
    return use_dense, use_sparse
