"""The word search alone at scale: what Edge's sparse search costs a lookup, and what its knobs change.

    python -m bench.perf.word_search [--incidents 1000000] [--lookups 200]

Builds a collection that holds only the word index of the varied synthetic backlog (each incident's words
as the store keeps them: its distilled text and the symptoms it tells of; the redaction pass is left out
for speed, which changes 9 in 500 of the vectors), optimizes it as the index build does, and times the
word search of held-out alerts (`make_query`'s sparse vector) the way a ranked lookup asks it:

  - limit 50 (a lookup's candidates), 20 and 10: does a smaller top-k let the engine prune;
  - copies with 8-bit weights (`datatype=Uint8`) and without the IDF modifier;
  - the query without its common words (held by more than 10 % or 5 % of the incidents), and how much of
    the top 10 stays.

Figures in docs/operations.md ("Where the 16 ms go").
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import qdrant_edge as E
from synth import varied_rows

from oncall_memory.answer.retrieve import make_query
from oncall_memory.domain import payload as P
from oncall_memory.domain.alert import Alert
from oncall_memory.domain.distill import distill
from oncall_memory.domain.incident import Incident
from oncall_memory.domain.lexical import Sparse
from oncall_memory.domain.vocabulary import symptoms
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.store.engines.base import SPARSE


def config(datatype: str = "Float32", idf: bool = True) -> E.EdgeConfig:
    params = E.EdgeSparseVectorParams(
        modifier=E.Modifier.Idf if idf else None, datatype=getattr(E.VectorStorageDatatype, datatype)
    )
    return E.EdgeConfig(
        vectors={}, sparse_vectors={SPARSE: params}, optimizers=E.EdgeOptimizersConfig(indexing_threshold=1)
    )


def vector(sparse: Sparse) -> E.SparseVector:
    return E.SparseVector(list(sparse.indices), [float(v) for v in sparse.values])


def build(path: Path, rows: list[dict]) -> Counter[int]:
    """The word index of `rows`, optimized; returns how many incidents hold each word."""
    shard, held, batch = E.EdgeShard.create(str(path), config()), Counter[int](), []
    for i, row in enumerate(rows):
        text = distill(Incident.model_construct(**row))
        words = P.sparse_of({P.TEXT: text, P.SYMPTOMS: symptoms(text)})  # as `build_point` makes them
        held.update(words.indices)
        batch.append(E.Point(str(uuid.UUID(int=i + 1)), {SPARSE: vector(words)}, {}))
        if len(batch) == 2000:
            shard.update(E.UpdateOperation.upsert_points(batch))
            batch = []
    if batch:
        shard.update(E.UpdateOperation.upsert_points(batch))
    shard.optimize()
    shard.close()
    return held


def copy(source: Path, path: Path, **settings: object) -> None:
    """The same points in a collection made with other word-index settings, optimized."""
    src, dst = E.EdgeShard.load(str(source), None), E.EdgeShard.create(str(path), config(**settings))  # type: ignore[arg-type]
    offset = None
    while True:
        records, offset = src.scroll(E.ScrollRequest(limit=5000, offset=offset, with_payload=False, with_vector=True))
        points = [E.Point(r.id, {SPARSE: r.vector[SPARSE]}, {}) for r in records if isinstance(r.vector, dict)]
        dst.update(E.UpdateOperation.upsert_points(points))
        if offset is None:
            break
    dst.optimize()
    src.close()
    dst.close()


def timed(shard: E.EdgeShard, queries: list[E.SparseVector], limit: int) -> tuple[float, float, list[list[str]]]:
    """p50 and p99 in ms of each query's word search, and the ids each found."""
    times, found = [], []
    for query in queries:
        started = time.perf_counter()
        points = shard.query(
            E.QueryRequest(
                query=E.Query.Nearest(query, using=SPARSE), limit=limit, with_payload=False, with_vector=False
            )
        )
        times.append((time.perf_counter() - started) * 1000)
        found.append([str(p.id) for p in points])
    ordered = sorted(times)
    return statistics.median(times), ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--incidents", type=int, default=1_000_000)
    parser.add_argument("--lookups", type=int, default=200)
    args = parser.parse_args()
    n = args.incidents
    rows = varied_rows(n + args.lookups)
    # The word search's query as a lookup makes it (words only: no embedding).
    embedder = FakeEmbedder(dimension=8)
    queries = [vector(make_query(Alert(text=row["title"]), embedder, "lexical").sparse) for row in rows[n:]]
    root = Path(tempfile.mkdtemp(prefix="word-search-"))
    try:
        started = time.perf_counter()
        held = build(root / "float32", rows[:n])
        print(f"{n:,} incidents' word index built and optimized in {time.perf_counter() - started:.0f}s")
        print(f"words a query holds: median {statistics.median(len(q.indices) for q in queries):.0f}")
        copy(root / "float32", root / "uint8", datatype="Uint8")
        copy(root / "float32", root / "no-idf", idf=False)
        for name in ("float32", "uint8", "no-idf"):
            shard = E.EdgeShard.load(str(root / name), None)
            timed(shard, queries[:20], 50)  # the first searches map the index's pages
            cells = []
            for limit in (50, 20, 10):
                p50, p99, _ = timed(shard, queries, limit)
                cells.append(f"limit {limit} {p50:.2f}/{p99:.2f}")
            print(f"  {name}: p50/p99 ms " + ", ".join(cells))
            if name == "float32":
                _, _, whole = timed(shard, queries, 50)
                for share in (0.10, 0.05):
                    kept = [
                        E.SparseVector(
                            [i for i in q.indices if held[i] <= share * n],
                            [v for i, v in zip(q.indices, q.values, strict=True) if held[i] <= share * n],
                        )
                        for q in queries
                    ]
                    p50, p99, found = timed(shard, kept, 50)
                    stays = statistics.mean(
                        len(set(a[:10]) & set(b[:10])) / max(1, len(a[:10])) for a, b in zip(whole, found, strict=True)
                    )
                    print(
                        f"    without words held by more than {share:.0%}: p50/p99 {p50:.2f}/{p99:.2f} ms, "
                        f"top 10 the same {stays:.0%}"
                    )
            shard.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
