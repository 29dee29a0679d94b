"""What every store promises: the collection contract, the index list and the query plan, as data.

A point holds two vectors computed from the same distilled text, a dense one for meaning and a
sparse one for words (hybrid search), and the whole incident as payload. The collection records the
embedding model and dimension it was built with: that is its contract. An engine module (`edge`,
`qdrant`) only translates these into its own calls.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ...domain import payload as P
from ...domain.conditions import HasId, Match, Where
from ...domain.lexical import Sparse
from ...errors import ContractMismatch, NothingStored

if TYPE_CHECKING:
    from ..ranking_table import Trained

DENSE = "meaning"
SPARSE = "words"
SCHEMA_VERSION = 1  # the payload layout; a store written by a newer layout is refused, not misread
# A collection's layout choices, recorded in its contract at creation and kept by every copy of it.
LAYOUT = ("payload", "quantization")
RRF_K = 2  # Qdrant's own default k, so fused orders agree across engines

Mode = Literal["hybrid", "dense", "lexical"]

# Payload indexes every engine builds: what filters, signature look-ups and ranking read.
INDEXES: dict[str, Literal["keyword", "datetime", "bool"]] = {
    **{
        field: "keyword"
        for field in (
            P.SOURCE,
            P.INCIDENT_ID,
            P.SERVICE,
            P.ENV,
            P.FLAVOR,
            P.TAGS,
            P.STATUS,
            P.SEVERITY,
            P.SIGNATURE_KEY,
        )
    },
    P.OPENED_AT: "datetime",
    P.HAS_WORKING_FIX: "bool",
}


@dataclass(frozen=True)
class StoredPoint:
    point_id: str
    dense: list[float]
    sparse: Sparse
    payload: dict[str, Any]


class Hit(NamedTuple):  # a tuple: a lookup makes one per candidate
    point_id: str
    score: float
    payload: dict[str, Any]
    terms: frozenset[int] = frozenset()  # indices of the point's sparse vector: which words it has


@dataclass(frozen=True)
class QueryPlan:
    """Which searches one query runs, and how their results combine.

    Both searches: reciprocal-rank fusion of the two candidate lists under the same filter; with
    `rescore`, the fused candidates come back scored by cosine similarity of meaning (one engine call
    instead of two), which ranking needs as an absolute relevance.
    """

    dense: bool
    sparse: bool
    rescore: bool = False

    @property
    def fused(self) -> bool:
        return self.dense and self.sparse

    @classmethod
    def of(
        cls, dense: Sequence[float] | None, sparse: Sparse | None, mode: Mode, *, rescore: bool = False
    ) -> QueryPlan:
        use_dense = dense is not None and mode in ("hybrid", "dense")
        use_sparse = sparse is not None and bool(sparse.indices) and mode in ("hybrid", "lexical")
        return cls(use_dense, use_sparse, rescore and use_dense and use_sparse)


def no_collection(collection: str, location: str) -> str:
    """What to say when there is nothing to read: where was looked, and how to point elsewhere."""
    where = location if "://" in location else str(Path(location).resolve())
    hint = "QDRANT_URL" if "://" in location else "ONCALL_MEMORY_DATA_DIR"
    return (
        f"no collection {collection!r} in {where}: run `oncall-memory ingest PATH` first, or set {hint} to "
        "where the memory is"
    )


class IncidentStore(ABC):
    """One collection in one engine. Use as a context manager, or call `close()`."""

    collection: str
    location: str
    # Where the engine keeps its files on this machine (embedded engines), for the room on the disk.
    disk_path: Path | None = None

    def __enter__(self) -> IncidentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the collection contract ------------------------------------------------------------

    @abstractmethod
    def exists(self) -> bool: ...

    @abstractmethod
    def contract(self) -> dict[str, Any]:
        """The model, dimension and schema the collection was built with."""

    @abstractmethod
    def _create(self, contract: dict[str, Any]) -> None:
        """Create the collection with both vectors, every index in `INDEXES`, and record `contract`."""

    def ensure_collection(self, model: str, dimension: int, *, like: dict[str, Any] | None = None) -> None:
        """Create the collection for this embedder on first write; afterwards check it was built with it.
        `like`: the contract of a collection this one copies (a restore, a reindex's copy, a migration), whose
        layout choices (`LAYOUT`: where the payload lives, how vectors are quantized) a new one keeps."""
        if not self.exists():
            layout = {k: like[k] for k in LAYOUT if k in like} if like else {}
            self._create({"embed_model": model, "dimension": dimension, "schema": SCHEMA_VERSION, **layout})
            return
        self.check_contract(model, dimension)

    def check_contract(self, model: str, dimension: int) -> None:
        """Raise `StoreUnavailable` if there is no collection, `ContractMismatch` if it was built otherwise."""
        if not self.exists():
            raise NothingStored(no_collection(self.collection, self.location))
        built = self.contract()
        if built.get("schema", 1) > SCHEMA_VERSION:
            raise ContractMismatch(
                f"collection {self.collection!r} was written by a newer oncall-memory (payload schema "
                f"{built['schema']}, this one reads {SCHEMA_VERSION}): upgrade oncall-memory"
            )
        if built.get("embed_model") != model or built.get("dimension") != dimension:
            raise ContractMismatch(
                f"collection {self.collection!r} was built with model {built.get('embed_model')} "
                f"({built.get('dimension')} dims); this embedder is {model} ({dimension} dims). "
                f"Run `oncall-memory reindex` to rebuild it with this model, or configure the original one "
                f"(ONCALL_MEMORY_EMBEDDER / ONCALL_MEMORY_EMBED_MODEL)"
            )

    # -- what each engine implements --------------------------------------------------------

    @abstractmethod
    def retrieve(self, point_ids: Sequence[str], fields: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """The payload (only `fields`, or all) of each of these points that is stored."""

    @abstractmethod
    def write(self, points: Sequence[StoredPoint]) -> None:
        """Upsert whole points: both vectors and the whole payload, always together."""

    @abstractmethod
    def replace_payloads(self, payloads: dict[str, dict[str, Any]], sparse: dict[str, Sparse] | None = None) -> None:
        """Replace the payload of points whose text (and so dense vector) did not change, and their sparse
        vector where `sparse` gives one."""

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def points(self, *, with_vectors: bool = False, batch: int = 256) -> Iterator[tuple[str, dict, dict | None]]:
        """Every stored point as (id, payload, vectors), vectors as {DENSE: [...], SPARSE: Sparse}."""

    @abstractmethod
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
        """Nearest incidents under `where`, run as `plan` says. Hits carry the payload `fields` (all when
        None), no vector: their words are the payload's `terms` (see `words_of` for points without)."""

    @abstractmethod
    def find(self, where: Where, *, limit: int) -> list[Hit]:
        """Points meeting `where` exactly, without a vector search (score 0), from the payload indexes."""

    @abstractmethod
    def values(self, field: str, *, limit: int = 1000) -> list[str]:
        """The distinct values of a keyword payload field, most frequent first (from its index)."""

    @abstractmethod
    def drop(self) -> None:
        """Delete the collection; the store stays open, ready to create it again."""

    @abstractmethod
    def sibling(self, collection: str) -> IncidentStore:
        """Another collection in the same place, through the same engine handle where there is one."""

    @abstractmethod
    def close(self) -> None: ...

    # -- built from the above ---------------------------------------------------------------

    def stored_hashes(self, point_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(text_hash, record_hash) of each id already stored; ids not stored are absent."""
        stored = self.retrieve(point_ids, [P.TEXT_HASH, P.RECORD_HASH])
        return {pid: (str(p.get(P.TEXT_HASH)), str(p.get(P.RECORD_HASH))) for pid, p in stored.items()}

    def similarities(self, dense: Sequence[float], point_ids: Sequence[str]) -> dict[str, float]:
        """Cosine similarity of `dense` to each of these points, computed by the engine."""
        if not point_ids:
            return {}
        hits = self.query(
            QueryPlan(dense=True, sparse=False),
            dense=dense,
            sparse=None,
            where=[HasId(frozenset(point_ids))],
            limit=len(point_ids),
            fields=(),
        )
        return {h.point_id: h.score for h in hits}

    def hybrid(
        self, *, dense: Sequence[float], sparse: Sparse, where: Where, limit: int, fields: Sequence[str] | None = None
    ) -> tuple[list[Hit], list[Hit]]:
        """What a ranked hybrid lookup reads: the fused candidates scored by cosine similarity of meaning
        (`QueryPlan(rescore=True)`), and the word search's own first `limit` hits with its scores. Two calls
        here (one round trip each to a server); Edge runs the searches apart anyway and answers both at once."""
        hits = self.query(
            QueryPlan(dense=True, sparse=True, rescore=True),
            dense=dense,
            sparse=sparse,
            where=where,
            limit=limit,
            fields=fields,
        )
        words = self.query(
            QueryPlan(dense=False, sparse=True), dense=None, sparse=sparse, where=where, limit=limit, fields=()
        )
        return hits, words

    def words_of(self, point_ids: Sequence[str]) -> dict[str, frozenset[int]]:
        """The terms of these points' sparse vectors: for points stored before the payload carried them."""
        if not point_ids:
            return {}
        return {h.point_id: h.terms for h in self.find([HasId(frozenset(point_ids))], limit=len(point_ids))}

    def signature_matches(self, key: str, *, limit: int = 10) -> list[Hit]:
        """Incidents whose canonical signature is exactly `key`."""
        return self.find([Match(P.SIGNATURE_KEY, key)], limit=limit)

    def ranking_sample(self) -> list[dict[str, Any]]:
        """Before a table of ranking fields starts: records to train its dictionary on (`ranking_table.train`,
        outside the store's lock). Empty once it has started, or for an engine that keeps none."""
        return []

    def fill_ranking_table(self, *, trained: Trained | None = None) -> bool:
        """Read the next batch of ranking fields into a table kept in memory, for a long-lived process
        (Edge keeps one), started with `trained`'s dictionary when given. True while there is more to read;
        an engine that keeps none says False."""
        return False

    def rescored_files(self) -> list[Path]:
        """The files a lookup's candidates are scored from, where the engine keeps them on this machine's disk
        (Edge: the original vectors); a service reads them into the page cache (`page_cache`)."""
        return []

    def ranking_table(self) -> tuple[int, int] | None:
        """(points held, bytes packed) of the ranking fields kept in memory, or None."""
        return None

    def swap_in(self, new: IncidentStore) -> None:
        """Put the complete collection `new` in this one's place, then drop `new`. Engines that can
        rename do it in place; the default copies by vector (no embedding)."""
        self.drop()
        copy_points(new, self)
        new.drop()
        new.close()

    def expected_count(self) -> int | None:
        """How many points were written, as recorded beside the engine's own files; None where the engine
        is the only record (a server)."""
        return None

    def record_count(self, count: int) -> None:  # noqa: B027 - most engines keep no record beside their own
        """Record how many points were written (see `expected_count`)."""

    def optimize(self) -> bool:
        """Build the engine's vector index now, where the engine builds it on request. False: nothing to do."""
        return False

    def index_state(self) -> IndexState | None:
        """How many points there are and how many the vector index covers; None where the engine looks
        after its index itself (a server indexes in the background; local mode only searches exactly)."""
        return None


class BuildsIndex(ABC):
    """What an engine that builds its vector index on request offers (Edge): the steps `guard.GuardedStore`
    takes to build it beside the live collection. The guard holds the locks; a step never takes one."""

    @abstractmethod
    def begin_index(self) -> IndexJob:
        """Start noting what is written from now on (writes are held back until the copy is made)."""

    @abstractmethod
    def copy_for_index(self, job: IndexJob) -> None:
        """Copy the collection's files (lookups may read meanwhile)."""

    @abstractmethod
    def build_index(self, job: IndexJob) -> None:
        """Build the index on the copy (no lock held: lookups and writes go on)."""

    @abstractmethod
    def written_during(self, job: IndexJob) -> list[str]:
        """The ids written since `begin_index` (writes are held back again by now)."""

    @abstractmethod
    def read_points(self, ids: Sequence[str]) -> list[Any]:
        """The live collection's records of `ids`, vectors and payload (a read: under the guard's lock)."""

    @abstractmethod
    def replay_into_index(self, job: IndexJob, batches: Iterable[list[Any]]) -> None:
        """Write the records written during the build into the built copy."""

    @abstractmethod
    def finish_index(self, job: IndexJob) -> IndexReport:
        """Swap the built collection in: the only step lookups wait for."""

    @abstractmethod
    def abandon_index(self, job: IndexJob) -> None:
        """Drop a build that failed; the live collection was never touched."""


@dataclass(frozen=True)
class IndexState:
    count: int
    indexed: int  # points the vector index covers; the rest are searched exactly

    def due(self, threshold: int) -> bool:
        """Worth (re)building: the collection is past the threshold and a tenth of it (and a tenth of the
        threshold) is outside the index, searched exactly."""
        if threshold <= 0 or self.count < threshold:
            return False
        return self.count - self.indexed >= max(threshold // 10, self.count // 10, 1)


@dataclass
class IndexJob:
    """An index build under way: the copy it runs on, and what it started from."""

    path: Any
    count: int
    started: float
    copy_seconds: float = 0.0
    built_seconds: float = 0.0
    replay_seconds: float = 0.0
    replayed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class IndexReport:
    count: int
    indexed: int
    copy_seconds: float  # writes waited (lookups did not)
    build_seconds: float  # in another process: nothing waited
    replay_seconds: float  # writes waited
    swap_seconds: float  # lookups waited this long
    replayed: int  # points written during the build, copied into the new index before the swap


def copy_points(source: IncidentStore, target: IncidentStore, *, batch: int = 256) -> int:
    """Copy every point (both vectors and the whole payload) from `source` into `target`."""
    contract = source.contract()
    target.ensure_collection(contract["embed_model"], contract["dimension"], like=contract)
    copied, pending = 0, []
    for point_id, payload, vectors in source.points(with_vectors=True, batch=batch):
        assert vectors is not None  # asked for
        pending.append(StoredPoint(point_id, list(vectors[DENSE]), vectors[SPARSE], payload))
        if len(pending) >= batch:
            target.write(pending)
            copied, pending = copied + len(pending), []
    target.write(pending)
    return copied + len(pending)


def hit(point_id: Any, score: float, payload: dict | None, sparse: Any) -> Hit:
    """A Hit from any engine's point: its id as text, and its words from its sparse vector if returned,
    else from the payload."""
    payload = payload or {}
    words = sparse.indices if sparse is not None else payload.get(P.TERMS) or ()
    return Hit(point_id=str(point_id), score=score, payload=payload, terms=frozenset(words))


def reciprocal_rank(rankings: Sequence[Sequence[str]], limit: int, k: int = RRF_K) -> list[tuple[str, float]]:
    """Ids fused by reciprocal rank, best first, as Qdrant fuses them: each list gives its n-th (from 0)
    1 / (n + k); equal scores keep the order they were first seen in (the first list first)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for n, point_id in enumerate(ranking):
            scores[point_id] = scores.get(point_id, 0.0) + 1.0 / (n + k)
    return sorted(scores.items(), key=lambda item: -item[1])[:limit]


# What both engines read back the same way: the payload a call asks for, and a point's named vectors.


def with_payload(fields: Sequence[str] | None) -> bool | list[str]:
    """Payload to return: all of it (None), these fields, or none (an empty list)."""
    return True if fields is None else (list(fields) or False)


def sparse_of(vector: Any) -> Any:
    return vector.get(SPARSE) if isinstance(vector, dict) else None


def vectors_of(vector: Any) -> dict:
    """A point's vectors as returned by an engine, as {DENSE: [...], SPARSE: Sparse or None}."""
    vector = vector if isinstance(vector, dict) else {}
    sparse = vector.get(SPARSE)
    return {
        DENSE: vector.get(DENSE),
        SPARSE: Sparse(indices=list(sparse.indices), values=list(sparse.values)) if sparse is not None else None,
    }
