"""Lookup overhead: the retriever vs a raw qdrant-client query_points on the same collection, same run.

    python -m bench.perf.lookup [--incidents 10000] [--dim 1536] [--queries 60]

The raw call is the same hybrid query (dense + sparse prefetch, RRF fusion, same filter) with vectors
computed beforehand and no ranking; the retriever adds alert cleaning, embedding (fake), the candidate
vectors, the signature check and fact ranking.
"""

from __future__ import annotations

import argparse
import statistics
import time

from qdrant_client import models
from synth import sample_alerts, synthetic_incidents

from bench.perf.engine import store_of
from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.domain.distill import distill_alert
from oncall_memory.domain.lexical import sparse_vector
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.store.engines import DENSE, SPARSE
from oncall_memory.store.engines.qdrant import QdrantStore, to_filter


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=10_000)
    ap.add_argument("--dim", type=int, default=1536)
    ap.add_argument("--queries", type=int, default=60)
    args = ap.parse_args()

    settings = Settings(data_dir=":memory:", embedder="fake")
    embedder = FakeEmbedder(dimension=args.dim)
    retriever = Memory.open(settings.model_copy(update={"embed_batch_size": 256}), embedder=embedder)
    store = store_of(retriever)
    t = time.perf_counter()
    retriever.ingest(synthetic_incidents(args.incidents))
    print(
        f"built {store.count()} incidents ({args.dim} dims) in {time.perf_counter() - t:.1f}s, qdrant-client local mode"
    )

    assert isinstance(store, QdrantStore)
    client = store._client  # the raw baseline talks to the very same collection
    alerts = [Alert.model_validate(a) for a in sample_alerts()]
    for label, filters in (("no filter", None), ("env filter", Filters(env="shop-prod"))):
        where = to_filter(filters.conditions()) if filters else None
        prepared = [(embedder.embed([distill_alert(a.text)])[0], sparse_vector(distill_alert(a.text))) for a in alerts]

        counter = {"raw": 0, "pipeline": 0}  # each side walks the alerts in the same order

        def raw():
            dense, sparse = prepared[counter["raw"] % len(prepared)]
            counter["raw"] += 1
            client.query_points(
                store.collection,
                prefetch=[
                    models.Prefetch(query=dense, using=DENSE, filter=where, limit=settings.candidates),
                    models.Prefetch(
                        query=models.SparseVector(indices=sparse.indices, values=sparse.values),
                        using=SPARSE,
                        filter=where,
                        limit=settings.candidates,
                    ),
                ],
                query=models.FusionQuery(fusion=models.Fusion.RRF),
                limit=5,
                with_payload=True,
            )

        def pipeline():
            alert = alerts[counter["pipeline"] % len(alerts)]
            counter["pipeline"] += 1
            retriever.similar(alert, filters=filters, limit=5)

        timed(raw, 3), timed(pipeline, 3)  # warm up
        raw_ms, pipe_ms = [], []
        for _ in range(args.queries):  # interleaved so drift hits both alike
            raw_ms += timed(raw, 1)
            pipe_ms += timed(pipeline, 1)
        r50, p50 = statistics.median(raw_ms), statistics.median(pipe_ms)
        print(
            f"{label:>10}: raw query_points p50 {r50:7.2f} ms p99 {pct(raw_ms, 99):7.2f} | "
            f"retriever p50 {p50:7.2f} ms p99 {pct(pipe_ms, 99):7.2f} | ratio {p50 / r50:.2f}x"
        )


if __name__ == "__main__":
    main()
