"""How an Edge collection is laid out and searched: its config (the vectors, their quantized copies, the HNSW
graph, where the payload lives), the search parameters a lookup uses, which payload indexes stay on disk,
what a collection's contract says of them, and what the engine's failures become (`StoreDamaged`,
`StoreUnavailable`, naming what to do)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as E

from ...domain import payload as P
from ...errors import OncallMemoryError, StoreDamaged, StoreUnavailable
from .base import DENSE, SPARSE

_INDEX_TYPES = {
    "keyword": E.PayloadSchemaType.Keyword,
    "datetime": E.PayloadSchemaType.Datetime,
    "bool": E.PayloadSchemaType.Bool,
}
F = TypeVar("F", bound=Callable[..., Any])
INDEX_SUFFIX = "__index"
RECOVERY = (
    "run `oncall-memory verify` to see what is damaged, and `oncall-memory restore BACKUP` to put a "
    "backup back (`oncall-memory backup PATH` makes one)"
)


# The vector index (see `index_state` and the README's "Scale"): an HNSW graph over int8-quantized
# vectors kept in RAM, rescored from the originals, which stay on disk (memory-mapped). Built only by
# `optimize()`, which `Memory.build_index` runs in another process on a copy (the engine holds the GIL
# while it optimizes, so in-process it would stop every thread).
HNSW_M, HNSW_EF_CONSTRUCT = 16, 100
HNSW_EF = 128  # candidates the graph search keeps; a lookup asks for 50
OVERSAMPLING = 2.0  # quantized candidates fetched per result, then rescored with the original vectors
RELEASE_SECONDS = 30.0  # how often a service with the payload on disk lets go of the payload pages it mapped
# The original vectors of a collection without a vector index stay mapped up to this size: each lookup reads them
# all (an exact search), so letting go of them only maps them back (20,000 incidents of 1,536 dims: 123 MB).
KEEP_MAPPED_BYTES = 128 << 20
FULL_SCAN_KB = 10_000  # a filter leaving fewer vectors than this (in KB) is searched exactly, by its payload index


# The copies of the vectors a lookup's graph search reads, in RAM (`ONCALL_MEMORY_QUANTIZATION`, fixed when a
# collection is created). int8: 1 byte a dimension. TurboQuant (Qdrant 1.18) rotates each vector, then keeps
# 4, 2 or 1 bits a dimension: at 100,000 x 1536 fake-embedder vectors, 2 bits gave int8's recall@10 (0.886
# against 0.879, both rescored) in a quarter of the memory and 2.1 ms against 2.9 (docs/operations.md, "Scale").
QUANTIZATIONS = ("int8", "turbo4", "turbo2", "turbo1")
_TURBO_BITS = {
    "turbo4": E.TurboQuantBitSize.Bits4,
    "turbo2": E.TurboQuantBitSize.Bits2,
    "turbo1": E.TurboQuantBitSize.Bits1,
}


SKIPPED = ("quantized", "deleted")  # beside the originals in a vector storage folder, and not them


def _quantization_config(quantization: str) -> Any:
    if quantization == "int8":
        return E.ScalarQuantizationConfig(type=E.ScalarType.Int8, quantile=0.99, memory=E.Memory.Pinned)
    return E.TurboQuantQuantizationConfig(bits=_TURBO_BITS[quantization], memory=E.Memory.Pinned)


def edge_config(dimension: int, *, payload_on_disk: bool = False, quantization: str = "int8") -> E.EdgeConfig:
    return E.EdgeConfig(
        vectors={
            DENSE: E.EdgeVectorParams(
                # Cold: the originals stay on disk and are read only to rescore a lookup's few candidates (at
                # 100,000 x 1536 dims, Cached kept 940 MB resident after load, Cold 355 MB; see bench.perf.scale).
                size=dimension,
                distance=E.Distance.Cosine,
                memory=E.Memory.Cold,
                quantization_config=_quantization_config(quantization),
                hnsw_config=E.HnswIndexConfig(
                    m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT, full_scan_threshold=FULL_SCAN_KB, memory=E.Memory.Cached
                ),
            )
        },
        # The word index stays pinned in RAM with the payload on disk too: mapped from its files instead, it
        # saved 3 MB per 10,000 incidents and cost 2-4 ms of p50 and 40 ms of p99 at 100,000 (first-time
        # lookups read the postings of their words from disk; docs/operations.md, "Scale").
        sparse_vectors={SPARSE: E.EdgeSparseVectorParams(modifier=E.Modifier.Idf)},
        # When to index is decided by `Memory.build_index` (the engine optimizes only when asked): once
        # asked, every segment gets its graph, whatever its size.
        optimizers=E.EdgeOptimizersConfig(indexing_threshold=1),
        # Cached: a lookup reads the ranking fields of its 50 candidates, scattered over the payload pages;
        # read from disk that was 5 of the 11 ms of a first-time lookup at 100,000 incidents (bench.perf.scale).
        # On disk (Cold), 2 KB an incident less in RAM: a service then keeps the ranking fields packed in
        # memory (`RankingTable`) and reads from disk only the payloads it shows.
        payload_memory=E.Memory.Cold if payload_on_disk else E.Memory.Cached,
    )


INDEXED_SEARCH = E.SearchParams(
    hnsw_ef=HNSW_EF, quantization=E.QuantizationSearchParams(rescore=True, oversampling=OVERSAMPLING)
)
# A ranked lookup picks its dense candidates by their int8 copies alone, then scores every fused candidate
# with its original vector (left to its defaults the outer query scored them by the int8 copies, up to 0.05
# off). Measured at 100,000 (bench in the README's "Scale"): 1.2 ms off the p50, 12 ms off the p99.
CANDIDATE_SEARCH = E.SearchParams(hnsw_ef=HNSW_EF, quantization=E.QuantizationSearchParams(rescore=False))
EXACT_SCORES = E.SearchParams(quantization=E.QuantizationSearchParams(ignore=True))


def _engine_errors(method: F) -> F:
    """An engine failure on read or write (a truncated page, an unreadable vector) as a `StoreDamaged`
    naming the store's path and what to do, not a traceback."""

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:  # a store: its `location` is named
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


# With the payload on disk, the payload indexes a lookup does not filter by stay on disk too: the ids (one
# value per incident, the largest), where an incident came from, its status and severity, and its
# signature (one exact look-up a lookup, a few pages).
_COLD_INDEXES = frozenset({P.INCIDENT_ID, P.SOURCE, P.STATUS, P.SEVERITY, P.SIGNATURE_KEY})


def _index_params(field: str, kind: str, contract: dict[str, Any]) -> Any:
    if not (_on_disk(contract) and field in _COLD_INDEXES):
        return _INDEX_TYPES[kind]
    return E.KeywordIndexParams(memory=E.Memory.Cold)


def _on_disk(contract: dict[str, Any]) -> bool:
    """Where the collection keeps its payload: recorded at creation (before the choice existed, in RAM)."""
    return contract.get("payload") == "disk"


def _quantized(contract: dict[str, Any]) -> str:
    """How the collection quantizes its vectors: recorded at creation (before the choice existed, int8)."""
    quantization = contract.get("quantization", "int8")
    if quantization not in QUANTIZATIONS:
        raise StoreDamaged(f"the store's contract names an unknown quantization {quantization!r}: {RECOVERY}")
    return quantization


def _load(path: Path, config: E.EdgeConfig | None = None) -> E.EdgeShard:
    try:
        return E.EdgeShard.load(str(path), config)
    except Exception as exc:  # the engine reports a held WAL lock as a runtime error
        if "WouldBlock" in str(exc) or "lock" in str(exc).lower():
            raise StoreUnavailable(_IN_USE.format(path=path)) from exc
        raise StoreDamaged(f"cannot open the embedded store at {path} ({exc}): {RECOVERY}") from exc
