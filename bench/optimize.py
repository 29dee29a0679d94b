"""Should the Edge store build its HNSW index? Measured on real embeddings (the local model).

    python -m bench.optimize [--incidents 10000]

Embeds the synthetic backlog with all-MiniLM-L6-v2, then times hybrid and filtered lookups through
the retriever with exact search, runs `optimize()` (timed), and times them again; reports how often
the top-5 changed (HNSW is approximate).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from oncall_memory.alert import Alert, Filters
from oncall_memory.embedders.local import LocalEmbedder
from oncall_memory.ingest import ingest
from oncall_memory.retrieve import Retriever
from oncall_memory.settings import Settings
from oncall_memory.storage import open_store

from .synth import synthetic_incidents


def run(retriever: Retriever, alerts: list[Alert], filters: Filters | None) -> tuple[float, list[list[str]]]:
    times, ids = [], []
    for a in alerts:
        t = time.perf_counter()
        lookup = retriever.similar(a, filters=filters, limit=5)
        times.append((time.perf_counter() - t) * 1000)
        ids.append([n.id for n in lookup.neighbours])
    return statistics.median(times), ids


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=10_000)
    args = ap.parse_args()
    embedder = LocalEmbedder()
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), embedder="local", store="edge", embed_batch_size=256)
    store = open_store(settings)
    t = time.perf_counter()
    incidents = synthetic_incidents(args.incidents)
    ingest(incidents, store, embedder, batch_size=256)
    print(f"embedded and stored {args.incidents} incidents with {embedder.model} in {time.perf_counter() - t:.0f}s")
    retriever = Retriever(store, embedder, weights=settings.weights)
    alerts = [Alert(text=i.title, flavor=i.flavor) for i in incidents[:: max(1, args.incidents // 200)]]
    results = {}
    for label, filters in (("hybrid", None), ("env filter", Filters(env="shop-prod"))):
        results[label] = run(retriever, alerts, filters)
    t = time.perf_counter()
    store.optimize()
    print(f"optimize() (HNSW build) took {time.perf_counter() - t:.1f}s")
    for label, filters in (("hybrid", None), ("env filter", Filters(env="shop-prod"))):
        exact_ms, exact_ids = results[label]
        hnsw_ms, hnsw_ids = run(retriever, alerts, filters)
        same = sum(a == b for a, b in zip(exact_ids, hnsw_ids)) / len(alerts)
        print(f"{label:>10}: exact p50 {exact_ms:.2f} ms | after optimize p50 {hnsw_ms:.2f} ms | "
              f"identical top-5 in {same:.0%} of {len(alerts)} lookups")
    store.close()


if __name__ == "__main__":
    main()
