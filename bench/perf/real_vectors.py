"""The local model's vectors of the varied synthetic backlog (`synth.varied_rows`), cached on disk.

    python -m bench.perf.real_vectors 40000

Embedding is the slow part (about 14 ms an incident on 2 cores), so the vectors are kept in
~/.cache/oncall-memory/bench/ and reused by `bench.perf.scale`'s recall check.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from synth import varied_rows

from oncall_memory.domain.distill import distill
from oncall_memory.domain.incident import Incident

CACHE = Path.home() / ".cache" / "oncall-memory" / "bench"


def real_vectors(n: int, *, seed: int = 11) -> tuple[list[Incident], np.ndarray]:
    """The first `n` varied incidents and their all-MiniLM-L6-v2 vectors (normalised, float32)."""
    from oncall_memory.embedders.local import LocalEmbedder

    incidents = [Incident.model_validate(row) for row in varied_rows(n, seed)]
    path = CACHE / f"varied-{seed}-{n}-all-MiniLM-L6-v2.npy"
    if path.exists():
        return incidents, np.load(path)
    larger = sorted(
        (p for p in CACHE.glob(f"varied-{seed}-*-all-MiniLM-L6-v2.npy") if int(p.stem.split("-")[2]) >= n),
        key=lambda p: int(p.stem.split("-")[2]),
    )
    if larger:  # the same generator and seed: a longer run starts with the same incidents
        return incidents, np.load(larger[0])[:n]
    CACHE.mkdir(parents=True, exist_ok=True)
    embedder = LocalEmbedder(cache=CACHE / "models")
    texts = [distill(i) for i in incidents]
    vectors = np.zeros((n, embedder.dimension), dtype=np.float32)
    started = time.perf_counter()
    for at in range(0, n, 512):
        vectors[at : at + 512] = embedder.embed(texts[at : at + 512])
        done = min(n, at + 512)
        print(f"\rembedded {done}/{n} ({time.perf_counter() - started:.0f}s)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    np.save(path, vectors)
    return incidents, vectors


if __name__ == "__main__":
    real_vectors(int(sys.argv[1]) if len(sys.argv) > 1 else 40_000)
