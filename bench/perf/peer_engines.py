"""The peers of `bench.perf.peers`, on vectors it hands over: runs in a venv of its own (chromadb, lancedb,
faiss-cpu, numpy, pyarrow; none of them the project's dependencies), imports nothing of the project.

    python bench/perf/peer_engines.py VECTORS.npz   # prints the rows as JSON; progress on stderr

Each engine with its own defaults (faiss: HNSW m=32, inner product on unit vectors; chromadb: its HNSW,
cosine; lancedb: IVF-PQ, cosine, with a scalar index on env), top 5, unfiltered and env-filtered, p50 and
p99 over the held-out queries after 10 warm-up queries, recall@5 against exact search.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

ENV = ""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(fn: Callable[[Any], Any], inputs: list[Any]) -> tuple[float, float]:
    for x in inputs[:10]:
        fn(x)
    times = []
    for x in inputs:
        started = time.perf_counter()
        fn(x)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), pct(times, 0.99)


def unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def exact_top5(stored: np.ndarray, queries: np.ndarray, allowed: np.ndarray | None) -> list[set[int]]:
    out = []
    for q in queries:
        scores = stored @ q
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
        out.append(set(np.argpartition(-scores, 5)[:5].tolist()))
    return out


def recall(found: list[set[int]], truth: list[set[int]]) -> float:
    return statistics.mean(len(f & t) / len(t) for f, t in zip(found, truth))


def peer_rows(stored: np.ndarray, envs: list[str], queries: np.ndarray) -> list[dict]:
    """chromadb, lancedb, faiss (HNSW) with their defaults, each when importable; build time and recall@5
    against exact search in the note."""
    stored, queries = unit(stored), unit(queries)
    allowed = np.array([e == ENV for e in envs])
    truth = {None: exact_top5(stored, queries, None), ENV: exact_top5(stored, queries, allowed)}
    rows: list[dict] = []
    for name, make in (("faiss HNSW (m=32)", _faiss), ("chromadb", _chroma), ("lancedb IVF-PQ", _lance)):
        try:
            started = time.perf_counter()
            search = make(stored, envs)
            built = time.perf_counter() - started
        except ImportError:
            print(f"  ({name} not installed: skipped)", file=sys.stderr, flush=True)
            continue
        cells, recalls = [], []
        for env in (None, ENV):
            found: list[set[int]] = []
            cells.append(timed(lambda q, env=env, found=found: found.append(search(q, env)), list(queries)))  # type: ignore[misc]
            recalls.append(recall(found[-len(queries) :], truth[env]))
        note = f"built {built:.0f} s; recall@5 {recalls[0]:.2f} / {recalls[1]:.2f}"
        rows.append({"name": name, "unfiltered": cells[0], "env": cells[1], "note": note})
        print(f"  {name}: {note}", file=sys.stderr, flush=True)
    return rows


def _faiss(stored: np.ndarray, envs: list[str]) -> Callable[[np.ndarray, str | None], set[int]]:
    import faiss

    index = faiss.IndexHNSWFlat(stored.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    index.add(stored)
    in_env = np.array([i for i, e in enumerate(envs) if e == ENV], dtype=np.int64)
    params = faiss.SearchParametersHNSW(sel=faiss.IDSelectorBatch(in_env))

    def search(q: np.ndarray, env: str | None) -> set[int]:
        _, found = index.search(q[None, :], 5, params=params if env else None)
        return {int(i) for i in found[0] if i >= 0}

    return search


def _chroma(stored: np.ndarray, envs: list[str]) -> Callable[[np.ndarray, str | None], set[int]]:
    import chromadb

    client = chromadb.PersistentClient(path=tempfile.mkdtemp(prefix="peers-chroma-"))
    collection = client.create_collection("incidents", metadata={"hnsw:space": "cosine"})
    step = 5000
    for start in range(0, len(stored), step):
        collection.add(
            ids=[str(i) for i in range(start, min(start + step, len(stored)))],
            embeddings=stored[start : start + step],
            metadatas=[{"env": e} for e in envs[start : start + step]],
        )

    def search(q: np.ndarray, env: str | None) -> set[int]:
        answer = collection.query(query_embeddings=[q], n_results=5, where={"env": env} if env else None)
        return {int(i) for i in answer["ids"][0]}

    return search


def _lance(stored: np.ndarray, envs: list[str]) -> Callable[[np.ndarray, str | None], set[int]]:
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(tempfile.mkdtemp(prefix="peers-lance-"))
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(stored.reshape(-1)), stored.shape[1])
    table = db.create_table(
        "incidents", pa.table({"id": pa.array(range(len(stored))), "env": pa.array(envs), "vector": vectors})
    )
    table.create_index(metric="cosine")  # IVF-PQ with lancedb's defaults
    table.create_scalar_index("env")

    def search(q: np.ndarray, env: str | None) -> set[int]:
        query = table.search(q).limit(5)
        if env:
            query = query.where(f"env = '{env}'", prefilter=True)
        return {int(r["id"]) for r in query.to_list()}

    return search


if __name__ == "__main__":
    data = np.load(sys.argv[1])
    ENV = str(data["env"])
    print(json.dumps(peer_rows(data["stored"], [str(e) for e in data["envs"]], data["queries"])))
