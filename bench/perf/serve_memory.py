"""Peak RSS of `oncall-memory serve` over a large embedded (Edge) store.

    python -m bench.perf.serve_memory [--incidents 50000] [--dim 1536] [--requests 200]

Builds the store with the fake embedder, starts the service on loopback, sends lookups and webhooks,
then reads the service's VmHWM (peak resident set) from /proc.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import httpx
from synth import sample_alerts, synthetic_incidents

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings

from .serving import Serve


def proc_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=50_000)
    ap.add_argument("--dim", type=int, default=1536)
    ap.add_argument("--requests", type=int, default=200)
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="oncall-memory-rss-"))
    settings = Settings(data_dir=data, embedder="fake", embed_dim=args.dim, store="edge")
    t = time.perf_counter()
    with Memory.open(settings.model_copy(update={"embed_batch_size": 256}), embedder=FakeEmbedder(args.dim)) as memory:
        memory.ingest(synthetic_incidents(args.incidents))
    print(f"built {args.incidents} incidents ({args.dim} dims, edge) in {time.perf_counter() - t:.0f}s")

    env = {
        "ONCALL_MEMORY_DATA_DIR": str(data),
        "ONCALL_MEMORY_EMBEDDER": "fake",
        "ONCALL_MEMORY_EMBED_DIM": str(args.dim),
    }
    with Serve(env) as service:
        url, ready = service.url, service.ready_seconds
        idle = proc_kb(service.pid, "VmRSS")
        alerts = sample_alerts()
        with httpx.Client(base_url=url, timeout=30) as client:
            t = time.perf_counter()
            for i in range(args.requests):
                client.post("/similar", json={"alert": alerts[i % len(alerts)], "limit": 5}).raise_for_status()
            took = time.perf_counter() - t
        peak = proc_kb(service.pid, "VmHWM")
        print(
            f"serve: ready in {ready:.1f}s, RSS after start {idle / 1024:.0f} MB, peak RSS {peak / 1024:.0f} MB "
            f"after {args.requests} lookups ({took / args.requests * 1000:.1f} ms each over HTTP)"
        )


if __name__ == "__main__":
    main()
