"""A top-5 lookup side by side: the raw engine, `Memory` dense-only and ranked, and peers, on the same data.

    python -m bench.perf.peers [--n 100000] [--queries 200] [--data DIR]

The data: `synth`'s varied backlog (fake embedder, 1536 dims), ingested into the embedded store and
indexed as `Memory.build_index` does (HNSW over int8 copies, rescored); `--data` keeps it for the next run.
The queries: held-out alerts of the same backlog, embedded beforehand, so every row times the search and
not the embedder. Each row, p50 and p99 in ms, unfiltered and with an env filter:

  - raw qdrant-edge: one dense query straight to the shard, with the project's search parameters;
  - its fused query for the ranked lookup: what the store asks the engine for a ranked lookup (dense and
    word candidates fused by RRF, rescored by the original vectors, the ranking fields of 50 read), and
    nothing else: the floor under the ranked row, whatever the ranking costs;
  - Memory, dense only, unranked: the same through the façade (alert cleaning, locks, payload reads);
  - Memory, ranked (the default lookup): dense + words, fused, rescored, ranked by facts, explained;
  - chromadb, lancedb, faiss (HNSW): when installed (they are not dependencies of the project), with their
    own defaults, on the same vectors, with recall@5 against exact search where their answer may differ.

The index build is timed against the engine's own optimize of the same data (`optimize` in-process).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from synth import varied_rows

from oncall_memory.answer.retrieve import make_query
from oncall_memory.domain import payload as P
from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.domain.distill import distill_alert
from oncall_memory.domain.incident import Incident
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.store.engines import QueryPlan

from .engine import edge_shard, store_of
from .peer_engines import timed

DIM = 1536
ENV = "shop-prod"


def build(data: Path, n: int) -> dict:
    settings = Settings(data_dir=data, embedder="fake", embed_dim=DIM, index_threshold=0, embed_batch_size=256)
    out: dict = {}
    if (data / "edge").exists():
        return out
    incidents = [Incident.model_validate(r) for r in varied_rows(n)]
    with Memory.open(settings, embedder=FakeEmbedder(dimension=DIM)) as memory:
        started = time.perf_counter()
        memory.ingest(incidents)
        out["ingest_s"] = time.perf_counter() - started
        edge_shard(store_of(memory)).flush()
        shutil.copytree(data / "edge" / "incidents", data / "unindexed")  # for the engine's own optimize
        report = memory.build_index(force=True)
        out["build"] = report
    return out


def engine_optimize_seconds(data: Path) -> float:
    """The engine's own optimize on a copy of the same (unindexed) data, in this process."""
    import qdrant_edge as E

    from oncall_memory.store.engines.edge import edge_config

    copy = Path(tempfile.mkdtemp(prefix="peers-optimize-")) / "shard"
    shutil.copytree(data / "unindexed", copy)
    shard = E.EdgeShard.load(str(copy), edge_config(DIM))
    started = time.perf_counter()
    shard.optimize()
    seconds = time.perf_counter() - started
    shard.close()
    shutil.rmtree(copy.parent, ignore_errors=True)
    return seconds


def peer_rows(stored: np.ndarray, envs: list[str], queries: np.ndarray, python: str) -> list:
    """Run `bench/perf/peer_engines.py` under `python` (a venv holding chromadb, lancedb, faiss: they are not
    the project's dependencies, and chromadb's pins conflict with Prefect's) on the same vectors."""
    import json
    import subprocess

    folder = Path(tempfile.mkdtemp(prefix="peers-vectors-"))
    np.savez(folder / "vectors.npz", stored=stored, envs=np.array(envs), queries=queries, env=np.array(ENV))
    script = Path(__file__).with_name("peer_engines.py")
    quiet = {**os.environ, "RUST_LOG": "error", "PYTHONWARNINGS": "ignore"}  # lancedb's k-means chatter
    done = subprocess.run([python, str(script), str(folder / "vectors.npz")], capture_output=True, text=True, env=quiet)
    shutil.rmtree(folder, ignore_errors=True)
    if done.returncode:
        print(f"  peers failed: {done.stderr[-2000:]}")
        return []
    # Our own progress lines only: lancedb's k-means warns per partition whatever RUST_LOG says.
    print("\n".join(line for line in done.stderr.splitlines() if line.startswith("  ") and not line.startswith("    ")))
    return [(r["name"], tuple(r["unfiltered"]), tuple(r["env"]), r["note"]) for r in json.loads(done.stdout)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--data", type=Path, help="keep the built store here (reused when it exists)")
    ap.add_argument("--peers", action="store_true", help="add chromadb, lancedb, faiss (those installed)")
    ap.add_argument("--peers-python", default=sys.executable, help="the interpreter whose venv holds the peers")
    args = ap.parse_args()
    data = args.data or Path(tempfile.mkdtemp(prefix="peers-"))
    built = build(data, args.n)
    rows = varied_rows(args.n + args.queries)[args.n :]
    alerts = [Alert(text=r["title"] + ". " + (r.get("error_signature") or "")) for r in rows]
    embedder = FakeEmbedder(dimension=DIM)
    vectors = embedder.embed([distill_alert(a.text) for a in alerts])

    class Precomputed(FakeEmbedder):
        """The alerts' vectors computed beforehand: every row times the search, not the embedder."""

        def __init__(self) -> None:
            super().__init__(dimension=DIM)
            self._known = {distill_alert(a.text): v for a, v in zip(alerts, vectors)}

        def embed(self, texts):
            return [self._known.get(t) or super().embed([t])[0] for t in texts]

    settings = Settings(data_dir=data, embedder="fake", embed_dim=DIM, index_threshold=0)
    table: list[tuple[str, tuple[float, float], tuple[float, float], str]] = []
    with Memory.open(settings, embedder=Precomputed()) as memory:
        import qdrant_edge as E

        from oncall_memory.store.engines.edge import DENSE, INDEXED_SEARCH, to_filter

        shard = edge_shard(store_of(memory))  # the raw engine under the same store
        for a in alerts:  # one untimed pass: every row then reads vectors and payloads the page cache holds
            memory.similar(a, limit=5)
            memory.similar(a, limit=5, filters=Filters(env=ENV))
        env_filter = to_filter(Filters(env=ENV).conditions())
        n = memory._store.count()

        def raw(flt: Any) -> Callable[[list[float]], Any]:
            return lambda v: shard.query(
                E.QueryRequest(
                    query=E.Query.Nearest(v, using=DENSE),
                    filter=flt,
                    limit=5,
                    params=INDEXED_SEARCH,
                    with_payload=False,
                    with_vector=False,
                )
            )

        table.append(("raw qdrant-edge (dense, top 5)", timed(raw(None), vectors), timed(raw(env_filter), vectors), ""))

        # The floor under the ranked lookup: the store's own query for it (meaning and words fused, 50
        # candidates rescored, their ranking fields read), with nothing ranked, explained or built.
        queries = [make_query(a, memory.embedder, "hybrid") for a in alerts]
        plan = QueryPlan.of(queries[0].dense, queries[0].sparse, "hybrid", rescore=True)

        def fused(where: Any) -> Callable[[Any], Any]:
            return lambda q: memory._store.query(
                plan, dense=q.dense, sparse=q.sparse, where=where, limit=settings.candidates, fields=P.RANKING_FIELDS
            )

        floor = timed(fused(Filters().conditions()), queries), timed(fused(Filters(env=ENV).conditions()), queries)
        table.append(("its fused query for the ranked lookup", *floor, "engine alone, nothing ranked"))

        def similar(**kw: Any) -> Callable[[Alert], Any]:
            return lambda a: memory.similar(a, limit=5, **kw)

        env = Filters(env=ENV)
        table.append(
            (
                "Memory, dense, unranked",
                timed(similar(mode="dense", rank=False), alerts),
                timed(similar(mode="dense", rank=False, filters=env), alerts),
                "",
            )
        )
        table.append(
            ("Memory, ranked (the default)", timed(similar(), alerts), timed(similar(filters=env), alerts), "")
        )
        if args.peers:
            ids, envs, stored = [], [], []
            for pid, payload, vecs in memory._store.points(with_vectors=True, batch=1024):
                ids.append(pid)
                envs.append(str(payload.get("env")))
                stored.append(vecs[DENSE])  # type: ignore[index]
    if args.peers:
        table += peer_rows(
            np.asarray(stored, dtype=np.float32), envs, np.asarray(vectors, dtype=np.float32), args.peers_python
        )
    raw_env = table[0][2][0]
    print(f"\n{n:,} incidents, {DIM} dims, {len(alerts)} held-out alerts, top 5; p50 / p99 ms")
    print(f"{'':34s} {'unfiltered':>16s} {'env filter':>16s}  vs raw (env, p50)")
    for name, (u50, u99), (e50, e99), note in table:
        print(f"{name:34s} {u50:7.2f} / {u99:6.2f} {e50:7.2f} / {e99:6.2f}  {e50 / raw_env:5.1f}x {note}")
    if built.get("build") is not None:
        b = built["build"]
        optimize = engine_optimize_seconds(data)
        print(
            f"\nindex build: {b.build_seconds:.1f} s in its child process (copy {b.copy_seconds:.1f} s, swap "
            f"{b.swap_seconds:.2f} s) vs the engine's own optimize of the same data {optimize:.1f} s: "
            f"{b.build_seconds / optimize:.2f}x"
        )


if __name__ == "__main__":
    main()
