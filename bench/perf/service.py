"""The enrichment service under load, from a second process, against the same lookups in-process.

    python -m bench.perf.service [--incidents 10000] [--dim 1536] [--seconds 15] [--concurrency 4] [--store DIR]
                            [--pairs N]

Builds an embedded store of synthetic incidents (fake embedder; `--store` keeps it in DIR, and a later run
given the same DIR reuses it), starts `oncall-memory serve` on loopback, drives POST /similar from one
client (a responder's wait, compared with the in-process lookup, which also has one caller; through httpx
and through a bare keep-alive client, so the client's own Python is seen apart), then filtered by env and
by env and tag, and then from
`--concurrency` clients (the service's throughput), then the Alertmanager webhook; stops the service, then
runs the same lookups in-process on the same store (with the part spent in the engine's searches) and the
raw engine's dense query of the same alerts. Prints requests/s, p50/p99 and ratios. The in-process lookups
run as served ones do (the ranking fields in memory, the service's collector settings). `--pairs N`
measures the one-client HTTP and in-process p50s N times in all, the service started afresh for each
pair, and prints the median ratio.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import qdrant_edge as E
from synth import sample_alerts, synthetic_incidents

from oncall_memory.domain.alert import Alert
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.errors import NothingStored
from oncall_memory.memory import Memory
from oncall_memory.service.app import long_lived
from oncall_memory.settings import Settings
from oncall_memory.store.engines.base import DENSE

from .engine import edge_shard
from .lookup import pct
from .serving import Serve

# Filtered, as a responder narrows a lookup: one env of the eight the backlog spreads over, then that env and
# a tag about a third of the incidents carry (the goal holds "filtered or not").
FILTERED = (("env", {"env": "shop-prod"}), ("env + tag", {"env": "shop-prod", "component_tags": ["kubernetes"]}))


def drive(url: str, make_request, seconds: float, concurrency: int) -> tuple[list[float], int]:
    """Send requests from `concurrency` threads for `seconds`; return latencies (ms) and error count."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def worker(n: int) -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            i = n
            while time.monotonic() < stop_at:
                method, path, body = make_request(i)
                t = time.perf_counter()
                r = client.request(method, path, json=body)
                ms = (time.perf_counter() - t) * 1000
                with lock:
                    latencies.append(ms)
                    errors[0] += r.status_code >= 300
                i += concurrency

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0]


def drive_bare(port: int, make_request, seconds: float) -> tuple[list[float], int]:
    """One client on one kept-alive connection that writes HTTP/1.1 and reads the reply's length and body,
    nothing more: what a pager's own client costs, against httpx's ~0.5 ms of Python a request here (a
    `/healthz` round trip 1.29 ms through httpx, 0.75 ms this way). Our service always sends Content-Length."""
    latencies: list[float] = []
    errors = 0
    with socket.create_connection(("127.0.0.1", port)) as sock, sock.makefile("rb") as reply:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        stop_at, i = time.monotonic() + seconds, 0
        while time.monotonic() < stop_at:
            method, path, body = make_request(i)
            data = json.dumps(body).encode()
            request = (
                f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n"
            ).encode() + data
            t = time.perf_counter()
            sock.sendall(request)
            status, length = int(reply.readline().split()[1]), 0
            while (line := reply.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            reply.read(length)
            latencies.append((time.perf_counter() - t) * 1000)
            errors += status >= 300
            i += 1
    return latencies, errors


def wait_for_table(url: str, deadline: float) -> float:
    """Seconds until the service holds every incident's ranking fields in memory (`GET /stats`)."""
    started = time.perf_counter()
    while (stats := httpx.get(f"{url}/stats", timeout=60).json()).get("ranking_fields_in_memory") != stats["count"]:
        if time.monotonic() > deadline:
            raise SystemExit("the service did not read the ranking fields into memory in time")
        time.sleep(0.25)
    return time.perf_counter() - started


def report(label: str, latencies: list[float], errors: int, seconds: float) -> float:
    p50 = pct(latencies, 50)
    print(
        f"{label:<28} {len(latencies) / seconds:8.1f} req/s   p50 {p50:8.2f} ms   p99 {pct(latencies, 99):8.2f} ms"
        f"   errors {errors}"
    )
    return p50


def start_service(data: Path, dim: int) -> tuple[Serve, float]:
    """`oncall-memory serve` on the store, once it answers and holds the ranking fields in memory, as a
    service does a few seconds after it starts (lookups read the payload until then): the service and the
    seconds the fields took."""
    env = {"ONCALL_MEMORY_DATA_DIR": str(data), "ONCALL_MEMORY_EMBEDDER": "fake", "ONCALL_MEMORY_EMBED_DIM": str(dim)}
    service = Serve(env, timeout=120)
    try:
        return service, wait_for_table(service.url, deadline=time.monotonic() + 300)
    except BaseException:
        service.stop()
        raise


def as_served(mem: Memory) -> None:
    """The in-process lookups run as the service runs them: the ranking fields in memory, and the
    collector's settings a served process has (without them the service gains 0.2 ms a lookup)."""
    while mem._guard.store.fill_ranking_table():
        pass
    long_lived()


def in_process(settings: Settings, dim: int, alerts: list[dict], seconds: float) -> list[float]:
    """The same lookups in this process for `seconds`, one caller: each one's ms."""
    lat, i = [], 0
    with Memory.open(settings, embedder=FakeEmbedder(dim)) as mem:
        as_served(mem)
        stop_at = time.monotonic() + seconds
        while time.monotonic() < stop_at:
            t = time.perf_counter()
            mem.similar(Alert.model_validate(alerts[i % len(alerts)]), limit=5)
            lat.append((time.perf_counter() - t) * 1000)
            i += 1
    return lat


def more_pairs(args: argparse.Namespace, settings: Settings, data: Path, similar, alerts, first) -> None:
    """HTTP (httpx and the bare client) and in-process p50s measured again, `--pairs` in all, each pair's
    two sides next to each other and in turn first, and the ratios' median: the engine holds its store in
    one process, so the two sides cannot run at once, and on a shared machine one run's ratio moved from
    0.95x to 1.73x between runs of the same code."""
    ratios = [first]
    for n in range(1, args.pairs):

        def served() -> tuple[float, float]:
            with start_service(data, args.dim)[0] as service:
                http = pct(drive(service.url, similar, args.seconds, 1)[0], 50)
                return http, pct(drive_bare(service.port, similar, args.seconds)[0], 50)

        if n % 2:
            here = pct(in_process(settings, args.dim, alerts, args.seconds), 50)
            http, bare = served()
        else:
            http, bare = served()
            here = pct(in_process(settings, args.dim, alerts, args.seconds), 50)
        print(f"pair {n + 1}: in process p50 {here:.2f} ms, httpx {http:.2f} ms, bare {bare:.2f} ms")
        ratios.append((http / here, bare / here))
    for k, name in enumerate(("httpx", "bare client")):
        each = sorted(r[k] for r in ratios)
        print(
            f"HTTP /similar p50 ({name}) / in-process p50, {len(each)} pairs: median {statistics.median(each):.2f}x "
            f"({', '.join(f'{r:.2f}' for r in each)})"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=10_000)
    ap.add_argument("--dim", type=int, default=1536)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--store", type=Path, help="keep the built store here; reuse it when it is there")
    ap.add_argument("--pairs", type=int, default=1, help="HTTP and in-process p50s this many times (see `more_pairs`)")
    args = ap.parse_args()

    data = args.store or Path(tempfile.mkdtemp(prefix="oncall-memory-bench-"))
    settings = Settings(data_dir=data, embedder="fake", embed_dim=args.dim)
    t = time.perf_counter()
    with Memory.open(settings, embedder=FakeEmbedder(args.dim)) as mem:
        try:
            built = int(mem.stats()["count"])
        except NothingStored:
            built = 0
        if built != args.incidents:
            if built:
                raise SystemExit(f"{data} holds {built} incidents, not {args.incidents}: give another --store")
            mem.ingest(synthetic_incidents(args.incidents))
        # The vector index, as a store this size has it (above ONCALL_MEMORY_INDEX_THRESHOLD): built here, not
        # by the service in the background while the phases are timed.
        mem.build_index()
        indexed = bool((state := mem.index_state()) and state.indexed)
    how = "indexed" if indexed else "exact search (below the index threshold)"
    verb = "reused" if built == args.incidents else "built"
    print(
        f"store: {args.incidents} incidents, {args.dim} dims, {how}, {verb} in {time.perf_counter() - t:.1f}s at {data}"
    )

    alerts = sample_alerts()
    similar = lambda i: ("POST", "/similar", {"alert": alerts[i % len(alerts)], "limit": 5})  # noqa: E731
    service, table_s = start_service(data, args.dim)
    url, port = service.url, service.port
    try:
        print(f"service on {url}, ranking fields in memory {table_s:.1f}s after ready, {args.seconds:g}s per phase\n")
        lat, err = drive(url, similar, args.seconds, 1)
        http_p50 = report("POST /similar, 1 client", lat, err, args.seconds)
        lat, err = drive_bare(port, similar, args.seconds)
        bare_p50 = report("  the same, a bare client", lat, err, args.seconds)
        for label, filters in FILTERED:
            body = lambda i, f=filters: ("POST", "/similar", {**similar(i)[2], "filters": f})  # noqa: E731
            report(f"POST /similar, {label}", *drive(url, body, args.seconds, 1), args.seconds)
            report("  the same, a bare client", *drive_bare(port, body, args.seconds), args.seconds)
        lat, err = drive(url, similar, args.seconds, args.concurrency)
        http_rate = len(lat) / args.seconds
        report(f"POST /similar, {args.concurrency} clients", lat, err, args.seconds)

        def webhook(i: int):
            a = alerts[i % len(alerts)]
            alert = {
                "status": "firing",
                "labels": {"alertname": "Bench", "service": a.get("service", ""), "env": a.get("env", "")},
                "annotations": {"summary": a["text"]},
                "startsAt": "2026-11-29T00:00:00Z",
                "fingerprint": f"bench-{i}",
            }
            return "POST", "/webhooks/alertmanager", {"version": "4", "status": "firing", "alerts": [alert]}

        lat, err = drive(url, webhook, args.seconds, args.concurrency)
        report(f"POST /webhooks/alertmanager, {args.concurrency} clients", lat, err, args.seconds)
    finally:
        service.stop()

    lat.clear()
    searching: list[float] = []
    i = 0
    with Memory.open(settings, embedder=FakeEmbedder(args.dim)) as mem:
        engine = mem._guard.store  # the engine's own calls, timed beside the whole lookup
        as_served(mem)
        stop_at = time.monotonic() + args.seconds
        searches = {name: getattr(engine, name) for name in ("hybrid", "query")}

        def timed(call):
            def run(*a, **k):
                t = time.perf_counter()
                try:
                    return call(*a, **k)
                finally:
                    searching[-1] += (time.perf_counter() - t) * 1000

            return run

        for name, call in searches.items():
            setattr(engine, name, timed(call))
        while time.monotonic() < stop_at:
            searching.append(0.0)
            t = time.perf_counter()
            mem.similar(Alert.model_validate(alerts[i % len(alerts)]), limit=5)
            lat.append((time.perf_counter() - t) * 1000)
            i += 1
        # The raw engine: one dense query of the same alerts' vectors, default parameters, 50 candidates.
        vectors = FakeEmbedder(args.dim).embed([a["text"] for a in alerts])
        raw = []
        stop_at = time.monotonic() + args.seconds
        i = 0
        while time.monotonic() < stop_at:
            request = E.QueryRequest(
                query=E.Query.Nearest(list(vectors[i % len(vectors)]), using=DENSE),
                limit=50,
                with_payload=False,
                with_vector=False,
            )
            t = time.perf_counter()
            edge_shard(engine).query(request)
            raw.append((time.perf_counter() - t) * 1000)
            i += 1
    inproc_p50 = report("in-process Memory.similar", lat, 0, args.seconds)
    rest = [whole - engine_ms for whole, engine_ms in zip(lat, searching)]
    print(f"  of which the engine's searches   p50 {pct(searching, 50):8.2f} ms   p99 {pct(searching, 99):8.2f} ms")
    print(f"  of which the rest (ranking ...)  p50 {pct(rest, 50):8.2f} ms   p99 {pct(rest, 99):8.2f} ms")
    raw_p50 = report("raw Edge dense query, 50", raw, 0, args.seconds)
    # One caller each: the time HTTP adds to a responder's wait. With more clients than cores the service's
    # p50 is mostly queueing, so they are compared by throughput instead.
    print(f"\nHTTP /similar p50, 1 client / in-process p50 = {http_p50 / inproc_p50:.2f}x (httpx)")
    print(f"HTTP /similar p50, 1 bare client / in-process p50 = {bare_p50 / inproc_p50:.2f}x")
    print(f"in-process req/s / HTTP req/s with {args.concurrency} clients = {len(lat) / args.seconds / http_rate:.2f}x")
    print(f"in-process p50 / raw Edge dense p50 = {inproc_p50 / raw_p50:.2f}x")
    if args.pairs > 1:
        more_pairs(args, settings, data, similar, alerts, (http_p50 / inproc_p50, bare_p50 / inproc_p50))


if __name__ == "__main__":
    main()
