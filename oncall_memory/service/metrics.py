"""`/metrics` in Prometheus' format (prometheus-client): what a team watches in Grafana.

One registry per app (not the process-wide default), so two services in one process (tests) never
share counters. Counters move as things happen; the outbox depth, the store's count and the index's lag
are read when Prometheus scrapes.

Every series the shipped dashboard (grafana-dashboard.json) and rules (prometheus-rules.yml) read exists
from the first scrape: each label value known in advance (search modes, embedding purposes, ingest
results, the configured targets, the app's routes) starts at 0, so a panel shows 0 rather than "No data"
and `rate()` / `increase()` see the first event. Process metrics (CPU, memory, open files) come with them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import InvalidInput, NothingStored
from ..ingest.ingest import IngestReport
from ..store.engines.base import IndexState
from .outbox import FAILED, NEW, PENDING, SENDING, Outbox

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
MODES = ("hybrid", "dense", "lexical")
PURPOSES = ("ingest", "lookup")
OUTCOMES = ("delivered", "retried", "failed")
RUN_OUTCOMES = ("completed", "stopped")
RESULTS = ("new", "updated", "unchanged", "rejected")
WAITING = (NEW, PENDING, SENDING, FAILED)  # outbox states a delivery can be in before it is done


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "oncall_memory_http_requests",
            "HTTP requests by route, method and status",
            ["route", "method", "status"],
            registry=r,
        )
        self.request_seconds = Histogram(
            "oncall_memory_http_request_duration_seconds",
            "HTTP request latency by route",
            ["route"],
            buckets=_SECONDS,
            registry=r,
        )
        self.lookups = Counter(
            "oncall_memory_lookups",
            "Lookups by search mode and whether they were degraded",
            ["mode", "degraded"],
            registry=r,
        )
        self.lookup_seconds = Histogram(
            "oncall_memory_lookup_duration_seconds", "Lookup latency, embedding included", buckets=_SECONDS, registry=r
        )
        self.embed_seconds = Histogram(
            "oncall_memory_embedder_duration_seconds",
            "Embedding call latency",
            ["purpose"],
            buckets=_SECONDS,
            registry=r,
        )
        self.embed_failures = Counter(
            "oncall_memory_embedder_failures", "Embedding calls that failed", ["purpose"], registry=r
        )
        self.deliveries = Counter(
            "oncall_memory_deliveries",
            "Delivery attempts by target and outcome (delivered, retried, failed)",
            ["target", "outcome"],
            registry=r,
        )
        self.ingest_runs = Counter(
            "oncall_memory_ingest_runs", "Ingest runs by outcome (completed, stopped)", ["outcome"], registry=r
        )
        self.ingested = Counter(
            "oncall_memory_ingested_incidents",
            "Incidents seen by ingest, by result (new, updated, unchanged, rejected)",
            ["result"],
            registry=r,
        )
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        self._targets: tuple[str, ...] = ()
        for mode in MODES:
            for degraded in ("true", "false"):
                self.lookups.labels(mode, degraded)
        for purpose in PURPOSES:
            self.embed_seconds.labels(purpose)
            self.embed_failures.labels(purpose)
        for outcome in RUN_OUTCOMES:
            self.ingest_runs.labels(outcome)
        for result in RESULTS:
            self.ingested.labels(result)

    def known(self, targets: list[str], routes: list[tuple[str, str]]) -> None:
        """Start the configured targets' deliveries and the app's routes (template, method) at 0."""
        self._targets = tuple(targets)
        for target in targets:
            for outcome in OUTCOMES:
                self.deliveries.labels(target, outcome)
        for route, method in routes:
            self.requests.labels(route, method, "200")
            self.request_seconds.labels(route)

    def watch(
        self,
        outbox: Outbox,
        count: Callable[[], int],
        index: Callable[[], IndexState | None] = lambda: None,
        free: Callable[[], int | None] = lambda: None,
    ) -> Callable[[], None]:
        """Read the outbox depth, the store's count (`count()`), the index's lag (`index()`) and the data
        dir's free bytes (`free()`) at each scrape, until the returned function is called (when the service
        stops)."""
        gauges = _Gauges(outbox, count, index, self._targets, free)
        self.registry.register(gauges)
        return lambda: self.registry.unregister(gauges)

    def watch_families(self, uncovered: Callable[[], int]) -> Callable[[], None]:
        """Read how many alert families have nothing on record (`uncovered()`) at each scrape."""
        gauge = _Families(uncovered)
        self.registry.register(gauge)
        return lambda: self.registry.unregister(gauge)

    # -- what the memory and the dispatcher report ------------------------------------------------

    def lookup(self, mode: str, degraded: bool, seconds: float) -> None:
        self.lookups.labels(mode, str(degraded).lower()).inc()
        self.lookup_seconds.observe(seconds)

    def embedded(self, purpose: str, seconds: float, failed: bool) -> None:
        self.embed_seconds.labels(purpose).observe(seconds)
        if failed:
            self.embed_failures.labels(purpose).inc()

    def ingest(self, report: IngestReport, *, stopped: bool) -> None:
        self.ingest_runs.labels("stopped" if stopped else "completed").inc()
        for result in ("new", "updated", "unchanged", "rejected"):
            self.ingested.labels(result).inc(getattr(report, result))

    def delivery(self, target: str, outcome: str) -> None:
        self.deliveries.labels(target, outcome).inc()

    def exposition(self) -> tuple[bytes, str]:
        """The text Prometheus scrapes, and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _Families(Collector):
    def __init__(self, uncovered: Callable[[], int]):
        self._uncovered = uncovered

    def collect(self) -> Iterator[GaugeMetricFamily]:
        gauge = GaugeMetricFamily(
            "oncall_memory_alert_families_nothing_close",
            "Alert families seen in the last 30 days whose latest answer read nothing close is on record "
            "(oncall-memory coverage: the runbooks to write)",
        )
        try:
            gauge.add_metric([], self._uncovered())
        except Exception:  # noqa: BLE001 - a log that cannot be read: no sample rather than a failed scrape
            return
        yield gauge


class HttpMetrics:
    """ASGI middleware: count and time every HTTP request by its route template (`/incidents/{incident_id}`,
    never the raw path, so a scanner cannot blow up the label set), method and status."""

    def __init__(self, app: ASGIApp, metrics: Metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # an exception that escapes every handler is what the server answers with
        started = time.perf_counter()

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = scope["method"] if scope["method"] in _METHODS else "other"
            self.metrics.requests.labels(route, method, str(status)).inc()
            self.metrics.request_seconds.labels(route).observe(time.perf_counter() - started)


_METHODS = {"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"}


class _Gauges(Collector):
    def __init__(
        self,
        outbox: Outbox,
        count: Callable[[], int],
        index: Callable[[], IndexState | None],
        targets: tuple[str, ...],
        free: Callable[[], int | None] = lambda: None,
    ):
        self._outbox, self._count, self._index, self._targets = outbox, count, index, targets
        self._free = free

    def collect(self) -> Iterator[GaugeMetricFamily]:
        depth = GaugeMetricFamily(
            "oncall_memory_outbox_depth", "Deliveries waiting, by target and state", labels=["target", "state"]
        )
        counts = {(t, s): 0 for t in self._targets for s in WAITING}
        counts.update(self._outbox.depth())
        for (target, state), n in sorted(counts.items()):
            depth.add_metric([target, state], n)
        yield depth
        incidents = GaugeMetricFamily("oncall_memory_incidents", "Incidents in the memory")
        try:
            incidents.add_metric([], self._count())
        except (InvalidInput, NothingStored):  # nothing ingested yet
            incidents.add_metric([], 0)
        except Exception:  # noqa: BLE001 - a store that cannot count: no sample rather than a failed scrape
            pass
        yield incidents
        if (free := self._free()) is not None:
            room = GaugeMetricFamily(
                "oncall_memory_data_dir_free_bytes",
                "Bytes free on the data dir's filesystem (webhooks are refused with 503 when it is full)",
            )
            room.add_metric([], free)
            yield room
        try:
            index = self._index()
        except Exception:  # noqa: BLE001 - as for the count: no sample rather than a failed scrape
            return
        # None: nothing ingested yet, or an engine that indexes by itself: nothing waits outside an index.
        lag = GaugeMetricFamily(
            "oncall_memory_unindexed_incidents",
            "Incidents outside the vector index (searched exactly until the next index build)",
        )
        lag.add_metric([], index.count - index.indexed if index else 0)
        yield lag
