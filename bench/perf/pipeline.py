"""Pipeline overhead on the default engine (Edge), one run, same data:

- ingest of N incidents through the full pipeline (validate, redact, distill, hash, diff, fake embed,
  sparse vectors, write) vs a raw Edge upsert of the very same points;
- re-ingest of the unchanged backlog: embedding calls and wall time as a fraction of the first;
- lookup through the retriever (clean, embed, hybrid query, signature check, rank) vs a raw Edge
  query with the same prefetches, fusion and filter.

    python -m bench.perf.pipeline [--incidents 10000] [--dim 1536] [--queries 100]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import qdrant_edge as E
from synth import sample_alerts, synthetic_incidents

from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.domain.distill import distill_alert
from oncall_memory.domain.lexical import sparse_vector
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.ingest.ingest import prepare
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.store.engines import DENSE, SPARSE, open_store
from oncall_memory.store.engines.base import RRF_K
from oncall_memory.store.engines.edge import to_filter as to_edge_filter

from .engine import edge_shard, store_of
from .lookup import pct


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=10_000)
    ap.add_argument("--dim", type=int, default=1536)
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    incidents = synthetic_incidents(args.incidents)
    embedder = FakeEmbedder(args.dim)

    # Raw: the same points the pipeline will write, computed beforehand, upserted straight into Edge.
    prepared = [prepare(i) for i in incidents]
    vectors = embedder.embed([p.text for p in prepared])
    raw_rows = [(p.point_id, v, _sv(p.text), p.payload) for p, v in zip(prepared, vectors)]
    raw_settings = Settings(data_dir=Path(tempfile.mkdtemp()), embedder="fake", store="edge")
    raw_store = open_store(raw_settings)
    raw_store.ensure_collection(embedder.model, embedder.dimension)
    shard = edge_shard(raw_store)
    t = time.perf_counter()  # raw = the engine's own point objects from plain lists, then upsert
    for start in range(0, len(raw_rows), 64):
        batch = [
            E.Point(pid, {DENSE: v, SPARSE: E.SparseVector(*sv)}, payload)
            for pid, v, sv, payload in raw_rows[start : start + 64]
        ]
        shard.update(E.UpdateOperation.upsert_points(batch))
    raw_ingest = time.perf_counter() - t

    settings = Settings(data_dir=Path(tempfile.mkdtemp()), embedder="fake", store="edge", embed_batch_size=64)
    fresh = FakeEmbedder(args.dim)
    retriever = Memory.open(settings, embedder=fresh)
    store = store_of(retriever)
    t = time.perf_counter()
    first = retriever.ingest(incidents)
    pipe_ingest = time.perf_counter() - t
    again = FakeEmbedder(args.dim)
    t = time.perf_counter()
    second = Memory(store, again, settings).ingest(incidents)
    re_ingest = time.perf_counter() - t

    print(f"{args.incidents} incidents, {args.dim} dims, fake embedder, Qdrant Edge, batches of 64")
    print(
        f"ingest  raw Edge upsert {raw_ingest:7.2f} s | pipeline {pipe_ingest:7.2f} s "
        f"({first.embedding_calls} embedding calls) | ratio {pipe_ingest / raw_ingest:.2f}x"
    )
    print(f"        (the fake embedder alone took {_time_embed(embedder, prepared):.2f} s of that; raw excludes it)")
    print(
        f"re-ingest unchanged: {second.embedding_calls} embedding calls, {len(again.calls)} embed() calls, "
        f"{re_ingest:.2f} s = {re_ingest / pipe_ingest:.0%} of the first ingest"
    )

    alerts = [Alert.model_validate(a) for a in sample_alerts()]
    for label, filters in (("no filter", Filters()), ("env filter", Filters(env="shop-prod"))):
        flt = to_edge_filter(filters.conditions())
        prepared_q = []
        for a in alerts:
            text = distill_alert(a.text)
            prepared_q.append((embedder.embed([text])[0], E.SparseVector(*_sv(text))))

        def raw(i: int) -> None:
            dense, sparse = prepared_q[i % len(prepared_q)]
            edge_shard(store).query(
                E.QueryRequest(
                    limit=5,
                    query=E.Fusion.Rrf(k=RRF_K),  # type: ignore[arg-type]  # the stub's union leaves Fusion's variants out
                    with_payload=True,
                    prefetches=[
                        E.Prefetch(limit=settings.candidates, query=E.Query.Nearest(dense, using=DENSE), filter=flt),
                        E.Prefetch(limit=settings.candidates, query=E.Query.Nearest(sparse, using=SPARSE), filter=flt),
                    ],
                )
            )

        def pipeline(i: int) -> None:
            retriever.similar(alerts[i % len(alerts)], filters=filters, limit=5)

        for i in range(5):
            raw(i)
            pipeline(i)
        raw_ms, pipe_ms = [], []
        for i in range(args.queries):
            t = time.perf_counter()
            raw(i)
            raw_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            pipeline(i)
            pipe_ms.append((time.perf_counter() - t) * 1000)
        r50, p50 = statistics.median(raw_ms), statistics.median(pipe_ms)
        print(
            f"lookup {label:>10}: raw Edge query p50 {r50:6.2f} ms p99 {pct(raw_ms, 99):6.2f} | retriever p50 "
            f"{p50:6.2f} ms p99 {pct(pipe_ms, 99):6.2f} | ratio {p50 / r50:.2f}x"
        )
    store.close()
    raw_store.close()


def _sv(text: str) -> tuple[list[int], list[float]]:
    s = sparse_vector(text)
    return list(s.indices), list(s.values)


def _time_embed(embedder: FakeEmbedder, prepared) -> float:
    t = time.perf_counter()
    for start in range(0, len(prepared), 64):
        embedder.embed([p.text for p in prepared[start : start + 64]])
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
