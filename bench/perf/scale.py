"""How the embedded store scales, exact and indexed, with a projection to a million incidents.

    python -m bench.perf.scale [--sizes 10000 50000 100000 200000] [--lookups 200] [--recall-sizes 10000 20000 40000]
    python -m bench.perf.scale --store DATA_DIR --incidents 1000000 [--passes cold,warm]   # a store made before

With ONCALL_MEMORY_PAYLOAD_ON_DISK=true the stores are made with the payload on disk.

For each size (the varied synthetic backlog, fake embedder, 1536 dims, Edge, this machine):
  - ingest rate through `Memory.ingest`;
  - `oncall-memory serve` started on the store: time to ready, RSS after start and after the lookups (and
    after them, by part of the store: `bench.perf.resident`),
    p50/p99 of `GET /similar` unfiltered, with an env filter, with env + tag (HTTP included), first with
    exact search, then again after `Memory.build_index` (timed: copy, build in a child process, swap);
  - the raw engine on the same data: one dense query straight to the Edge shard, exact and indexed.
With `QDRANT_URL` set, the same run goes to that Qdrant server or cluster (a collection `scale_<n>` per size,
dropped first): the server builds its index itself while it ingests, so there is one serving measurement,
taken once the collection reports green, and the raw query goes through qdrant-client with the same search
parameters. No server runs on the machine these figures come from: that path has not been run.
Then the recall check on realistic vectors: the local model's embeddings of the varied backlog
(`bench.perf.real_vectors`, cached), recall@10 of the indexed, quantized, rescored search against exact search
on held-out alerts, unfiltered and with an env filter.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from synth import varied_rows

from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.domain.distill import distill, distill_alert
from oncall_memory.domain.incident import Incident
from oncall_memory.embedders.base import Embedder
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings

from . import resident
from .engine import edge_shard, store_of
from .serve_memory import proc_kb
from .serving import Serve

DIM = 1536
FILTERS = {"unfiltered": {}, "env": {"env": "shop-prod"}, "env+tag": {"env": "shop-prod", "tag": "kubernetes"}}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Serving(Serve):
    """`oncall-memory serve` on a data dir, as a deployment runs it (the store's index builds are left to
    the benchmark: ONCALL_MEMORY_INDEX_THRESHOLD=0)."""

    def __init__(self, data: Path, collection: str = "incidents"):
        super().__init__(
            {
                "ONCALL_MEMORY_DATA_DIR": str(data),
                "ONCALL_MEMORY_EMBEDDER": "fake",
                "ONCALL_MEMORY_EMBED_DIM": str(DIM),
                "ONCALL_MEMORY_INDEX_THRESHOLD": "0",
                "ONCALL_MEMORY_COLLECTION": collection,
            }
        )

    def rss_mb(self) -> float:
        return proc_kb(self.proc.pid, "VmRSS") / 1024

    def table_seconds(self) -> float:
        """Seconds until the service holds every incident's ranking fields in memory (it reads them in the
        background once ready, the payload on disk or in RAM; lookups read the payload until then)."""
        started = time.perf_counter()
        while True:
            stats = httpx.get(self.url + "/stats", timeout=60).json()
            if stats.get("ranking_fields_in_memory") == stats["count"]:
                return time.perf_counter() - started
            time.sleep(0.5)

    def lookups(self, alerts: list[str], params: dict) -> list[float]:
        times = []
        with httpx.Client(base_url=self.url, timeout=60) as http:
            for text in alerts:
                started = time.perf_counter()
                http.get("/similar", params={"text": text, **params}).raise_for_status()
                times.append((time.perf_counter() - started) * 1000)
        return times


def measure_serving(data: Path, alerts: list[str], collection: str = "incidents") -> dict[str, Any]:
    serving = Serving(data, collection)
    try:
        out: dict[str, Any] = {
            "ready_s": serving.ready_seconds,
            "table_s": serving.table_seconds(),
            "rss_start_mb": serving.rss_mb(),
        }
        serving.lookups(alerts[:10], {})  # warm the page cache the way the first pages of a shift would
        for label, params in FILTERS.items():
            times = serving.lookups(alerts, params)
            out[label] = (statistics.median(times), pct(times, 0.99))
        out["rss_after_mb"] = serving.rss_mb()
        out["resident"] = resident.of_process(serving.proc.pid, data)
        out["hwm_mb"] = proc_kb(serving.proc.pid, "VmHWM") / 1024
    finally:
        serving.stop()
    return out


def raw_query_ms(settings: Settings, vectors: list[list[float]]) -> tuple[float, float, float]:
    """p50 of one dense top-50 query straight to the Edge shard: exact, then as the store asks (indexed);
    and recall@10 of the indexed answers against the exact ones (the fake embedder's vectors are uniform
    on the sphere, a harder case for a graph index than a model's clustered ones)."""
    import qdrant_edge as E

    from oncall_memory.store.engines.edge import DENSE, INDEXED_SEARCH

    with Memory.open(settings, embedder=FakeEmbedder(dimension=DIM)) as memory:
        shard = edge_shard(store_of(memory))
        result, top10 = [], []
        for params in (E.SearchParams(exact=True), INDEXED_SEARCH):
            times, ids = [], []
            for v in vectors:
                started = time.perf_counter()
                hits = shard.query(
                    E.QueryRequest(
                        query=E.Query.Nearest(v, using=DENSE),
                        limit=50,
                        params=params,
                        with_payload=False,
                        with_vector=False,
                    )
                )
                times.append((time.perf_counter() - started) * 1000)
                ids.append({h.id for h in hits[:10]})
            result.append(statistics.median(times))
            top10.append(ids)
    recall = statistics.mean(len(e & i) / max(1, len(e)) for e, i in zip(*top10))
    return result[0], result[1], recall


def server_raw_query_ms(settings: Settings, vectors: list[list[float]]) -> tuple[float, float]:
    """The raw query against a Qdrant server: exact, then with the store's search parameters."""
    from qdrant_client import QdrantClient, models

    from oncall_memory.store.engines.base import DENSE

    client = QdrantClient(
        url=settings.qdrant_url, api_key=key.get_secret_value() if (key := settings.qdrant_api_key) else None
    )
    indexed = models.SearchParams(
        hnsw_ef=128, quantization=models.QuantizationSearchParams(rescore=True, oversampling=2.0)
    )
    result = []
    for params in (models.SearchParams(exact=True), indexed):
        times = []
        for v in vectors:
            started = time.perf_counter()
            client.query_points(
                settings.collection, query=v, using=DENSE, limit=50, search_params=params, with_payload=False
            )
            times.append((time.perf_counter() - started) * 1000)
        result.append(statistics.median(times))
    client.close()
    return result[0], result[1]


def wait_green(settings: Settings) -> float:
    """Seconds until the server reports the collection's optimizers done (its index built)."""
    from qdrant_client import QdrantClient, models

    client = QdrantClient(
        url=settings.qdrant_url, api_key=key.get_secret_value() if (key := settings.qdrant_api_key) else None
    )
    started = time.perf_counter()
    while client.get_collection(settings.collection).status != models.CollectionStatus.GREEN:
        time.sleep(1)
    client.close()
    return time.perf_counter() - started


def scale_run(n: int, lookups: int) -> dict:
    rows = varied_rows(n + lookups)
    incidents = [Incident.model_validate(r) for r in rows[:n]]
    alerts = [r["title"] for r in rows[n:]]
    data = Path(tempfile.mkdtemp(prefix=f"scale-{n}-"))
    settings = Settings(
        data_dir=data, embedder="fake", embed_dim=DIM, index_threshold=0, embed_batch_size=256, collection=f"scale_{n}"
    )
    embedder = FakeEmbedder(dimension=DIM)
    with Memory.open(settings, embedder=embedder) as memory:
        if settings.qdrant_url and memory._store.exists():
            memory._store.drop()  # a server keeps what an earlier run left
        started = time.perf_counter()
        memory.ingest(incidents)
        ingest_s = time.perf_counter() - started
    out: dict = {
        "n": n,
        "ingest_s": ingest_s,
        "ingest_rate": n / ingest_s,
        "disk_mb": sum(f.stat().st_size for f in data.rglob("*") if f.is_file()) / 2**20,
    }
    query_vectors = embedder.embed([distill_alert(a) for a in alerts[:50]])
    if settings.qdrant_url:  # the server indexes as it ingests: one measurement, once it is done
        out["green_s"] = wait_green(settings)
        out["indexed"] = measure_serving(data, alerts, settings.collection)
        out["raw_exact_ms"], out["raw_indexed_ms"] = server_raw_query_ms(settings, query_vectors)
        return out
    out["exact"] = measure_serving(data, alerts, settings.collection)
    with Memory.open(settings, embedder=embedder) as memory:
        report = memory.build_index(force=True)
    out["build"] = report
    out["indexed"] = measure_serving(data, alerts, settings.collection)
    out["raw_exact_ms"], out["raw_indexed_ms"], out["recall10"] = raw_query_ms(settings, query_vectors)
    return out


# -- recall on the local model's vectors ------------------------------------------------------------


class Precomputed(Embedder):
    """The local model, answering from vectors it computed earlier (cached by `bench.perf.real_vectors`) for the
    backlog's texts, and computing the rest (the held-out alerts)."""

    def __init__(self, texts: list[str], vectors: np.ndarray, model):
        self._by_text = {t: v for t, v in zip(texts, vectors.tolist())}
        self._model = model
        self.model, self.dimension = model.model, model.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self._by_text]
        if missing:
            self._by_text.update(zip(missing, self._model.embed(missing)))
        return [self._by_text[t] for t in texts]


def scores(lookup) -> Counter:
    return Counter(round(n.score, 4) for n in lookup.neighbours)


def recall_run(n: int, queries: int = 200) -> dict:
    from oncall_memory.embedders.local import LocalEmbedder

    from .real_vectors import CACHE, real_vectors

    incidents, vectors = real_vectors(n)
    rows = varied_rows(n + queries)[n:]  # held out: alerts the memory has not seen
    alerts = [Alert(text=r["title"] + ". " + (r.get("error_signature") or "")) for r in rows]
    embedder = Precomputed([distill(i) for i in incidents], vectors, LocalEmbedder(cache=CACHE / "models"))
    data = Path(tempfile.mkdtemp(prefix=f"recall-{n}-"))
    settings = Settings(data_dir=data, embedder="local", index_threshold=0, embed_batch_size=512)
    out: dict = {"n": n}
    kinds = (("unfiltered", None), ("env", Filters(env="shop-prod")))
    with Memory.open(settings, embedder=embedder) as memory:
        memory.ingest(incidents)
        exact = {
            label: [memory.similar(a, filters=f, limit=10, mode="dense", rank=False) for a in alerts]
            for label, f in kinds
        }
        ranked = [memory.similar(a, limit=5) for a in alerts]  # as a page is answered: hybrid, ranked
        memory.build_index(force=True)
        # Compared by score: the backlog holds incidents with the same text, whose exact ties either engine
        # may break its own way; a different incident with the same score is not a miss.
        out["ranked"] = statistics.mean(
            sum((scores(e) & scores(i)).values()) / max(1, len(e.neighbours))
            for e, i in zip(ranked, [memory.similar(a, limit=5) for a in alerts])
        )
        for label, f in kinds:
            indexed = [memory.similar(a, filters=f, limit=10, mode="dense", rank=False) for a in alerts]
            out[label] = statistics.mean(
                len({x.id for x in e.neighbours} & {x.id for x in i.neighbours}) / 10
                for e, i in zip(exact[label], indexed)
            )
    return out


def serve_store(data: Path, n: int, lookups: int, passes: list[str]) -> None:
    """`measure_serving` on a store made before (by this script, or `python -m bench.perf.scale` at a million, kept):
    one pass per entry of `passes`, "cold" after the kernel's page cache is dropped (root only), "warm" as it
    is, each with alerts the previous pass did not ask (the backlog's rows after the first `n`)."""
    rows = varied_rows(n + 2 * lookups)
    for i, how in enumerate(passes):
        if how == "cold":
            os.sync()
            try:
                Path("/proc/sys/vm/drop_caches").write_text("3\n")
            except OSError as exc:
                raise SystemExit(f"a cold pass drops the page cache, which needs root: {exc}") from exc
        start = n + (i % 2) * lookups
        m = measure_serving(data, [r["title"] for r in rows[start : start + lookups]])
        cells = "  ".join(f"{k} {m[k][0]:.1f}/{m[k][1]:.1f}" for k in FILTERS)
        table = f" (ranking fields in memory {m['table_s']:.1f}s later)"
        print(
            f"[{how}] serve ready {m['ready_s']:.1f}s{table}, RSS {m['rss_start_mb']:.0f} MB at start, "
            f"{m['rss_after_mb']:.0f} MB after lookups (peak {m['hwm_mb']:.0f}); p50/p99 ms: {cells}",
            flush=True,
        )
        print(
            "    resident after lookups, MB: " + ", ".join(f"{k} {v:.0f}" for k, v in m["resident"].items() if v >= 1)
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 50_000, 100_000, 200_000])
    ap.add_argument("--lookups", type=int, default=200)
    ap.add_argument("--recall-sizes", type=int, nargs="*", default=[10_000, 20_000, 40_000])
    ap.add_argument("--store", type=Path, help="measure serving on this data dir, made before, and stop")
    ap.add_argument("--incidents", type=int, help="with --store: how many incidents it holds (the first rows)")
    ap.add_argument("--passes", default="cold,warm", help="with --store: cold (page cache dropped) and/or warm")
    args = ap.parse_args()
    if args.store:
        if not args.incidents:
            ap.error("--store needs --incidents: the alerts asked are the varied backlog's rows after those")
        serve_store(args.store, args.incidents, args.lookups, args.passes.split(","))
        return
    server = Settings().qdrant_url
    engine = f"Qdrant server at {server}" if server else "Edge"
    if not server and Settings().payload_on_disk:  # ONCALL_MEMORY_PAYLOAD_ON_DISK=true
        engine += " (payload on disk, the service holding the ranking fields in memory)"
    if not server:  # ONCALL_MEMORY_QUANTIZATION
        engine += f", vectors quantized {Settings().quantization} in RAM"
    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; "
        f"fake embedder, {DIM} dims, {engine}; {args.lookups} lookups per kind over HTTP",
        flush=True,
    )
    runs = []
    for n in args.sizes:
        r = scale_run(n, args.lookups)
        runs.append(r)
        print(
            f"\n{n:,} incidents: ingest {r['ingest_s']:.0f}s ({r['ingest_rate']:.0f}/s), on disk {r['disk_mb']:.0f} MB"
        )
        if server:
            print(f"  the server's index done {r['green_s']:.0f}s after the ingest")
        else:
            b = r["build"]
            print(
                f"  index build: copy {b.copy_seconds:.1f}s (writes wait), build {b.build_seconds:.1f}s (child process), "
                f"swap {b.swap_seconds:.2f}s (lookups wait)"
            )
        for label in ("exact", "indexed"):
            if (m := r.get(label)) is None:
                continue
            cells = "  ".join(f"{k} {m[k][0]:.1f}/{m[k][1]:.1f}" for k in FILTERS)
            table = f" (ranking fields in memory {m['table_s']:.1f}s later)"
            print(
                f"  {label:8s} serve ready {m['ready_s']:.1f}s{table}, RSS {m['rss_start_mb']:.0f} MB at start, "
                f"{m['rss_after_mb']:.0f} MB after lookups (peak {m['hwm_mb']:.0f}); p50/p99 ms: {cells}"
            )
            parts = ", ".join(f"{part} {mb:.0f}" for part, mb in m["resident"].items() if mb >= 1)
            print(f"    resident after lookups, MB: {parts}")
            if label == "indexed" and not server:
                print(f"    (of the anonymous part, the pinned int8 copies: {n * DIM / 2**20:.0f} MB)")
        ix = r["indexed"]["unfiltered"][0]
        line = (
            f"  raw engine, one dense top-50 query: exact {r['raw_exact_ms']:.1f} ms, indexed {r['raw_indexed_ms']:.2f} ms; "
            f"pipeline (HTTP, unfiltered, indexed) / raw indexed: {ix / r['raw_indexed_ms']:.1f}x"
        )
        if "exact" in r:
            ex = r["exact"]["unfiltered"][0]
            line += f"; exact: {ex / r['raw_exact_ms']:.2f}x; indexed / exact p50 {ix / ex:.2f}"
        if "recall10" in r:
            line += f"; recall@10 indexed vs exact (50 queries, raw engine) {r['recall10']:.3f}"
        print(line, flush=True)
    if len(runs) >= 2:
        a, b = runs[-2], runs[-1]
        per = b["n"] - a["n"]

        def project(get) -> float:
            return get(b) + (get(b) - get(a)) / per * (1_000_000 - b["n"])

        print("\nprojection to 1,000,000 incidents (linear from the two largest runs):")
        if not server:
            print(
                f"  exact p50 unfiltered {project(lambda r: r['exact']['unfiltered'][0]):.0f} ms, "
                f"RSS after lookups {project(lambda r: r['exact']['rss_after_mb']):.0f} MB"
            )
        print(
            f"  indexed p50 unfiltered {project(lambda r: r['indexed']['unfiltered'][0]):.0f} ms (graph search grows "
            f"slower than linearly: an upper bound), RSS after lookups "
            f"{project(lambda r: r['indexed']['rss_after_mb']):.0f} MB"
        )
        build = "" if server else f", index build {project(lambda r: r['build'].build_seconds) / 60:.0f} min"
        print(
            f"  ingest {project(lambda r: r['ingest_s']) / 60:.0f} min{build}, on disk "
            f"{project(lambda r: r['disk_mb']) / 1024:.1f} GB"
        )
    if args.recall_sizes:
        print(
            "\nrecall@10 of indexed (HNSW m=16, ef 128, int8, rescored x2) vs exact search, local-model vectors "
            "(all-MiniLM-L6-v2, 384 dims) of the varied backlog, 200 held-out alerts:",
            flush=True,
        )
        for n in args.recall_sizes:
            r = recall_run(n)
            print(
                f"  {n:,} incidents: unfiltered {r['unfiltered']:.3f}, env filter {r['env']:.3f}; the ranked hybrid "
                f"lookup's top 5, indexed vs exact: {r['ranked']:.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
