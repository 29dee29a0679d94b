"""Store engines side by side: Qdrant Edge vs qdrant-client local mode, same data, one run.

    python -m bench.perf.store [--sizes 1000 10000 50000] [--dim 1536] [--queries 50]

Each (engine, size) runs in its own process so RSS is its own: build (upsert in batches of 512),
close, reopen, then p50/p99 of top-10 dense queries without and with an env + tag filter. Vectors
are random with a fixed seed; payloads are the synthetic incidents' real payloads.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synth import synthetic_incidents

from oncall_memory.domain.alert import Filters
from oncall_memory.domain.lexical import sparse_vector
from oncall_memory.ingest.ingest import prepare
from oncall_memory.settings import Settings
from oncall_memory.store.engines import QueryPlan, StoredPoint, open_store

from .lookup import pct


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def one(engine: str, size: int, dim: int, queries: int) -> dict:
    rng = random.Random(42)
    data = Path(tempfile.mkdtemp(prefix=f"bench-{engine}-"))
    settings = Settings(data_dir=data, embedder="fake", store=engine)
    prepared = [prepare(i) for i in synthetic_incidents(size)]
    points = [
        StoredPoint(p.point_id, [rng.gauss(0, 1) for _ in range(dim)], sparse_vector(p.text), p.payload)
        for p in prepared
    ]
    store = open_store(settings)
    store.ensure_collection("bench", dim)
    t = time.perf_counter()
    for start in range(0, size, 512):
        store.write(points[start : start + 512])
    upsert_s = time.perf_counter() - t
    store.close()
    del points, prepared

    t = time.perf_counter()
    store = open_store(settings)
    store.count()
    reopen_s = time.perf_counter() - t
    rss = rss_mb()
    where = Filters(env="shop-prod", component_tags=["dns"]).conditions()
    result = {"engine": engine, "size": size, "upsert_s": upsert_s, "reopen_s": reopen_s, "rss_mb": rss}
    for label, flt in (("plain", []), ("filtered", where)):
        lat = []
        for _ in range(queries):
            q = [rng.gauss(0, 1) for _ in range(dim)]
            t = time.perf_counter()
            store.query(QueryPlan(dense=True, sparse=False), dense=q, sparse=None, where=flt, limit=10)
            lat.append((time.perf_counter() - t) * 1000)
        result[f"{label}_p50"], result[f"{label}_p99"] = pct(lat, 50), pct(lat, 99)
    store.close()
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 50_000])
    ap.add_argument("--dim", type=int, default=1536)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--one", nargs=2, metavar=("ENGINE", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args.dim, args.queries)))
        return
    print(f"{args.dim} dims, {args.queries} queries per figure, top-10, filter = env + component tag")
    print(
        f"{'size':>7} {'engine':>6} {'upsert s':>9} {'reopen s':>9} {'RSS MB':>8} {'p50 ms':>8} {'p99 ms':>8}"
        f" {'filt p50':>9} {'filt p99':>9}"
    )
    for size in args.sizes:
        rows = {}
        for engine in ("edge", "local"):
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "bench.perf.store",
                    "--one",
                    engine,
                    str(size),
                    "--dim",
                    str(args.dim),
                    "--queries",
                    str(args.queries),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            r = rows[engine] = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{size:>7} {engine:>6} {r['upsert_s']:>9.2f} {r['reopen_s']:>9.2f} {r['rss_mb']:>8.0f}"
                f" {r['plain_p50']:>8.2f} {r['plain_p99']:>8.2f} {r['filtered_p50']:>9.2f} {r['filtered_p99']:>9.2f}",
                flush=True,
            )
        e, lo = rows["edge"], rows["local"]
        print(
            f"{size:>7} {'local/edge':>6}  upsert {lo['upsert_s'] / e['upsert_s']:.1f}x  reopen {lo['reopen_s'] / e['reopen_s']:.1f}x"
            f"  RSS {lo['rss_mb'] / e['rss_mb']:.1f}x  p50 {lo['plain_p50'] / e['plain_p50']:.1f}x"
            f"  filtered p50 {lo['filtered_p50'] / e['filtered_p50']:.1f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
