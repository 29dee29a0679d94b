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

from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.embedders.local import LocalEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings

from .synth import synthetic_incidents


def run(retriever: Memory, alerts: list[Alert], filters: Filters | None) -> tuple[float, list[list[float]]]:
    """p50 lookup time, and each lookup's top-5 scores (the synthetic backlog repeats its 64 stories
    many times over, so which of several near-identical incidents comes first is a coin toss; whether
    the top-5 is as good is the question)."""
    times, scores = [], []
    for a in alerts:
        t = time.perf_counter()
        lookup = retriever.similar(a, filters=filters, limit=5)
        times.append((time.perf_counter() - t) * 1000)
        scores.append([n.score for n in lookup.neighbours])
    return statistics.median(times), scores


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=10_000)
    args = ap.parse_args()
    embedder = LocalEmbedder()
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), embedder="local", store="edge", embed_batch_size=256)
    retriever = Memory.open(settings, embedder=embedder)
    store = retriever.store
    t = time.perf_counter()
    incidents = synthetic_incidents(args.incidents)
    retriever.ingest(incidents)
    print(f"embedded and stored {args.incidents} incidents with {embedder.model} in {time.perf_counter() - t:.0f}s")
    alerts = [Alert(text=i.title, flavor=i.flavor) for i in incidents[:: max(1, args.incidents // 200)]]
    embed_ms = statistics.median(_timed_embed(embedder, [a.text for a in alerts]))
    print(f"embedding one alert with the local model: p50 {embed_ms:.1f} ms (part of every lookup below)")
    results = {}
    for label, filters in (("hybrid", None), ("env filter", Filters(env="shop-prod"))):
        results[label] = run(retriever, alerts, filters)
    t = time.perf_counter()
    store.optimize()
    print(f"optimize() (HNSW build) took {time.perf_counter() - t:.1f}s")
    for label, filters in (("hybrid", None), ("env filter", Filters(env="shop-prod"))):
        exact_ms, exact_scores = results[label]
        hnsw_ms, hnsw_scores = run(retriever, alerts, filters)
        same = sum(
            all(abs(x - y) < 1e-4 for x, y in zip(a, b)) and len(a) == len(b) for a, b in zip(exact_scores, hnsw_scores)
        ) / len(alerts)
        loss = statistics.mean(sum(a) - sum(b) for a, b in zip(exact_scores, hnsw_scores))
        print(
            f"{label:>10}: exact p50 {exact_ms:.2f} ms | after optimize p50 {hnsw_ms:.2f} ms | top-5 as good "
            f"(same scores) in {same:.0%} of {len(alerts)} lookups, mean top-5 score lost {loss:.4f}"
        )
    store.close()


def _timed_embed(embedder: LocalEmbedder, texts: list[str]) -> list[float]:
    out = []
    for text in texts:
        t = time.perf_counter()
        embedder.embed([text])
        out.append((time.perf_counter() - t) * 1000)
    return out


if __name__ == "__main__":
    main()
