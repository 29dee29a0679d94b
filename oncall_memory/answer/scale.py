"""How meaning reads in this memory: what an alert with nothing here scores (its null), and how close its own
incidents stand to each other. Confidence reads an answer's meaning against the two (`Scale.standing`).

Cosines of one model live on different scales in different memories. Alerts score 0.40 against a memory of
pager incidents when nothing there is theirs, and 0.69 against a team's runbooks written about the same
product; a memory of wordy post-mortems puts the right answer at 0.56 where a pager memory puts it at 0.61.
One fitted curve over raw meaning cannot serve them all, so each memory measures itself, without labels:

- its null: a fixed bank of everyday alerts (`PROBES`, on every kind of system, so that most have nothing
  in any one memory) is looked up, and the median of their best meanings is what "nothing of its own" scores
  here;
- its neighbours: up to `SAMPLE` of its own incidents are looked up, each without itself, and the median of
  their nearest's meaning is how close two tellings of one problem stand here.

An answer's standing is where its meaning lies between the two: 0 at the null, 1 at the neighbours.

The same measurement counts how many incidents hold each word (over up to `WORD_SAMPLE` of them: every one in
a memory that size or smaller, a fair draw in a larger one). Confidence weighs the alert's words an answer
shares by their rarity here (`Scale.rare_share`): in a memory of one product's runbooks the alerts with
nothing on record are its other problems, as close by meaning as a right answer is, and what tells them apart
is the alert's rare words (a metric's name, a component) in the answer.

The scale is measured by an ingest that changed the memory by a tenth or more, or finds it never measured
for this model (a memory from before, a reindex, a scale from before the words were counted), when the
calibration reads it; kept in the data dir per collection, and read again by every process when it changes.
A memory not yet measured, or of fewer than `MIN_INCIDENTS`, reads against `UNMEASURED`.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import statistics
from collections import Counter
from collections.abc import Collection
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..datadir import write_atomic
from ..domain import payload as P
from ..domain.distill import distill_alert
from ..domain.lexical import idf
from ..embedders import Embedder
from ..errors import EmbeddingFailed
from ..store.engines import DENSE, IncidentStore, QueryPlan
from .told import NONE as NO_TOLD
from .told import Told, centroids, prototype_texts
from .told import measure as measure_told

log = logging.getLogger(__name__)

SAMPLE = 200  # incidents looked up for their neighbours: the median settles well before this
WORD_SAMPLE = 5000  # incidents whose words are counted: a word's rarity among 5,000 is its rarity in a million
REMEASURE = 0.1  # measured again once the memory's size moved by this share since
MIN_INCIDENTS = 20  # fewer say little about how their neighbours stand: they read as unmeasured
MIN_SPAN = 0.05  # a memory whose neighbours stand no nearer than its null reads as if they did by this much

# Everyday alerts on every kind of system, written for this bank (not taken from any evaluation set). Most
# have nothing in any one team's memory; the median's half that might is what makes it robust. Seven were
# near-copies of the protocol's alerts (cosine 0.80-0.90, all-MiniLM-L6-v2: "clock skew on several nodes: NTP
# not synchronised" and the like), found on 2026-12-05 when an alert's nearest probe was tried as evidence, and
# were rewritten: the first seven of fourteen new ones written that stood below 0.7 to every alert of the eight
# sets and to every other probe. tests/test_local_model.py keeps the shipped sets' alerts below 0.8.
PROBES: tuple[str, ...] = (
    "Disk usage above 90% on the database volume",
    "TLS certificate for the public API expires in 7 days",
    "DNS resolution failures for internal service names",
    "Nightly backup job did not complete",
    "Node NotReady: kubelet stopped posting status",
    "Pod OOMKilled: container exceeded its memory limit",
    "HTTP 5xx error rate above 5% on the gateway",
    "SFTP partner uploads rejected: host key changed",
    "Postgres replication lag above 60 seconds",
    "Redis memory usage near maxmemory, evictions rising",
    "Elasticsearch cluster health is red, unassigned shards",
    "Backup job failed: snapshot upload to object storage timed out",
    "Cron job did not run in the last 24 hours",
    "Load balancer health checks failing for all targets in one zone",
    "Too many open files in the web server process",
    "CPU throttling high for the payments container",
    "Message queue dead letter queue is filling up",
    "S3 bucket access denied errors after policy change",
    "Jenkins build agents offline, CI queue growing",
    "Deployment rollout stuck, new replica set has zero available pods",
    "Rate limiting by upstream provider, HTTP 429 responses",
    "Mail server outbound queue growing, messages deferred",
    "Filesystem is read-only after an I/O error",
    "Connection pool exhausted: cannot acquire a database connection",
    "Login failures spike: authentication service returning errors",
    "Email delivery queue backed up, SMTP relay rejecting mail",
    "Prometheus target down, scrape failing",
    "Etcd leader changes too frequent",
    "Persistent volume claim pending, no storage class can provision it",
    "Memory leak: heap usage grows until the JVM garbage collector thrashes",
    "Search index is stale, documents not updated for hours",
    "Payment provider webhook signature verification failing",
    "Cache hit ratio dropped sharply after a deploy",
    "Network packet loss between two data centres",
    "VPN tunnel to the partner network is down",
    "Certificate authority bundle outdated, TLS handshake errors",
    "Feature flag service unreachable, clients using defaults",
    "Object storage latency high, uploads timing out",
    "LDAP directory sync failing, new users cannot log in",
    "Container image pull fails: registry returns unauthorized",
    "Database deadlocks increasing on the inventory table",
    "Log ingestion pipeline dropping events",
    "Mobile push notifications not delivered",
    "Billing batch job produced duplicate invoices",
    "Data warehouse nightly load failed on schema mismatch",
    "GPU node driver crash, training jobs failing",
    "CDN serving stale content after purge",
    "Video transcoding queue backlog growing",
    "Secrets rotation job failed, credentials near expiry",
    "Kernel soft lockup reported on a hypervisor host",
    "VPN tunnel to the branch office is down",
    "Hard disk SMART errors on a storage server",
    "Power supply failure in a rack",
    "Thread pool saturation, requests queueing in the API",
    "Out of inodes on the log volume",
    "Message broker disk alarm, publishers blocked",
    "Third party geolocation API returning errors",
    "Batch queue workers stuck, jobs not progressing",
    "Database migration locked the users table",
    "Time series database compaction failing",
)


@dataclass(frozen=True)
class Scale:
    """A memory's null and neighbours (cosines), and how many incidents it held when they were measured."""

    null: float
    neighbours: float
    incidents: int = 0
    model: str = ""
    # How many of `counted` incidents hold each word (term id): little-endian uint32 term ids, sorted, then
    # their counts, in base64 (a JSON object of 50,000 words would be read by every process at each change).
    counted: int = 0
    words: str = ""
    # Each symptom's centroid and reach by meaning (`told.Told`, JSON); "" for a scale measured before them.
    told: str = ""

    def __post_init__(self) -> None:
        # Read from a file every process shares: what a lookup would trip over later is refused here, where
        # a scale that cannot be read is measured again (`MemoryScale._refresh`).
        if not isinstance(self.counted, int) or self.counted < 0 or not isinstance(self.words, str):
            raise ValueError("the scale's word counts are not a count and a text")
        terms, counts = self._held_by
        if len(terms) and (np.any(terms[1:] <= terms[:-1]) or int(counts.max()) > self.counted):
            raise ValueError("the scale's word counts are out of order or above the incidents counted")

    @cached_property
    def _held_by(self) -> tuple[np.ndarray, np.ndarray]:
        raw = base64.b64decode(self.words, validate=True)
        if len(raw) % 8:
            raise ValueError("the scale's word counts are not pairs of 32-bit numbers")
        packed = np.frombuffer(raw, dtype="<u4")
        half = len(packed) // 2
        return packed[:half], packed[half:]

    def rare_share(self, alert: Collection[int], held: Collection[int]) -> float:
        """The share of the alert's words (term ids) an incident holds (`held`), each weighed by its rarity in
        this memory (BM25's inverse document frequency over the incidents counted; a word none holds weighs
        most). A memory whose words were not counted weighs them alike (the plain share)."""
        if not alert:
            return 0.0
        weight, total = _weights(self, frozenset(alert))
        held = held if isinstance(held, (set, frozenset)) else set(held)
        return sum(w for t, w in weight.items() if t in held) / total if total else 0.0

    @property
    def current(self) -> Scale:
        """Itself: a scale is its own source (see `retrieve.Retriever`; a memory's changes)."""
        return self

    @cached_property
    def symptoms(self) -> Told:
        """Which symptom an incident tells of by its meaning, here (`told.py`)."""
        return Told.load(self.told) if self.told else NO_TOLD

    def standing(self, meaning: float) -> float:
        """Where `meaning` lies between this memory's null (0) and its neighbours (1)."""
        return (meaning - self.null) / max(self.neighbours - self.null, MIN_SPAN)

    def due(self, incidents: int) -> bool:
        """Should a memory now holding `incidents` be measured again."""
        if self.incidents < MIN_INCIDENTS:  # read as unmeasured: measured again at every change
            return incidents != self.incidents
        if not self.counted or not self.told:  # measured before its words were counted, or its symptoms' meaning
            return True
        return abs(incidents - self.incidents) >= max(1, REMEASURE * self.incidents)


@lru_cache(maxsize=64)
def _weights(scale: Scale, alert: frozenset[int]) -> tuple[dict[int, float], float]:
    """Each of the alert's words by its rarity in `scale`'s memory, and their sum: read once per lookup, not
    once per neighbour shown."""
    if not scale.counted:
        return dict.fromkeys(alert, 1.0), float(len(alert))
    terms, counts = scale._held_by
    ids = np.fromiter(alert, dtype=np.int64, count=len(alert))
    df = np.zeros(len(ids), dtype=np.int64)
    if len(terms):
        at = np.minimum(np.searchsorted(terms, ids), len(terms) - 1)
        df = np.where(terms[at] == ids, counts[at], 0)
    weight = {int(t): idf(scale.counted, int(d)) for t, d in zip(ids, df, strict=True)}
    return weight, sum(weight.values())


class ScaleSource(Protocol):
    """Where a memory's scale of the moment is read: `MemoryScale` (its own measurement, or the unmeasured
    one), or a `Scale`, which is its own."""

    @property
    def current(self) -> Scale: ...


# all-MiniLM-L6-v2's figures on the shipped incidents (64): what a memory reads against until it is measured.
UNMEASURED = Scale(null=0.41, neighbours=0.57)


def probe_vectors(embedder: Embedder) -> list[list[float]]:
    """The probes, then the symptoms' prototypes, embedded as alerts are (one embedding call)."""
    return embedder.embed([distill_alert(p) for p in (*PROBES, *prototype_texts())])


def measure(store: IncidentStore, probes: list[list[float]], model: str) -> Scale:
    """Look the embedded probes (and after them the symptoms' prototypes, `probe_vectors`) and a sample of the
    memory's own incidents up."""
    probes, prototypes = probes[: len(PROBES)], probes[len(PROBES) :]
    plan = QueryPlan(dense=True, sparse=False)
    best = []
    for vector in probes:
        hits = store.query(plan, dense=vector, sparse=None, where=[], limit=1, fields=())
        if hits:
            best.append(hits[0].score)
    nearest = []
    sample = _sample(store)
    for point_id, _, vectors in sample:
        assert vectors is not None
        hits = store.query(plan, dense=vectors[DENSE], sparse=None, where=[], limit=2, fields=())
        score = next((h.score for h in hits if h.point_id != point_id), None)
        if score is not None:
            nearest.append(score)
    count = store.count()
    if count < MIN_INCIDENTS or not best or not nearest:
        return replace(UNMEASURED, incidents=count, model=model)
    counted, words = count_words(store)
    told = NO_TOLD
    if len(prototypes) == len(prototype_texts()):
        told = measure_told(centroids(prototypes), ((v[DENSE], p.get(P.SYMPTOMS) or ()) for _, p, v in sample if v))
    return Scale(statistics.median(best), statistics.median(nearest), count, model, counted, words, told.dump())


def count_words(store: IncidentStore) -> tuple[int, str]:
    """(incidents counted, how many of them hold each word, packed as `Scale.words` keeps it). Point ids
    are hashes of the incidents' ids: the first `WORD_SAMPLE` in id order are a fair draw."""
    held: Counter[int] = Counter()
    counted = 0
    for _, payload, _ in store.points(batch=1000):
        # A point stored before payloads carried their terms: its words read from its text, as its sparse
        # vector was made.
        words = payload.get(P.TERMS)
        held.update(set(words if words is not None else P.sparse_of(payload).indices))
        counted += 1
        if counted >= WORD_SAMPLE:
            break
    terms = np.array(sorted(held), dtype="<u4")
    counts = np.array([held[int(t)] for t in terms], dtype="<u4")
    return counted, base64.b64encode(np.concatenate([terms, counts]).tobytes()).decode("ascii")


def _sample(store: IncidentStore) -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
    # Point ids are hashes of the incidents' ids: the first in id order are as good as a random draw.
    out = []
    for point in store.points(with_vectors=True, batch=SAMPLE):
        out.append(point)
        if len(out) >= SAMPLE:
            break
    return out


class MemoryScale:
    """The scale this memory's lookups read: the one kept in the data dir for this collection and model,
    read again when the file changes (another process measured), or `UNMEASURED`."""

    def __init__(self, path: Path | None, model: str):
        self._path = path
        self._model = model
        self._seen: float | None = None
        self._scale = UNMEASURED
        self._measured: Scale | None = None

    @property
    def measured(self) -> Scale | None:
        """The scale measured for this memory, if any."""
        self._refresh()
        return self._measured

    @property
    def current(self) -> Scale:
        self._refresh()
        return self._scale

    @property
    def unmeasured(self) -> bool:
        """Never measured here, or measured before its words were counted (the next ingest measures it)."""
        measured = self.measured
        return measured is None or not measured.counted

    def measure(
        self, store: IncidentStore, embedder: Embedder, lock: AbstractContextManager[Any], *, when_due: bool = False
    ) -> Scale | None:
        """Measure this memory (`measure`) and keep it; with `when_due`, only once it grew or shrank by a tenth
        since it was last measured. The probes are embedded outside `lock` (the store's), as every embedding
        call is. A failed call is logged, and lookups read the scale they had."""
        measured = self.measured
        with lock:
            if not store.exists():
                return None
            if when_due and measured is not None and not measured.due(store.count()):
                return measured
        try:
            probes = probe_vectors(embedder)
        except EmbeddingFailed as exc:
            log.warning("the memory's scale was not measured: %s", exc)
            return measured
        with lock:
            scale = measure(store, probes, embedder.model)
        self.keep(scale)
        return scale

    def keep(self, scale: Scale) -> None:
        self._measured = self._scale = scale
        if self._path is None:
            return
        try:
            write_atomic(self._path, json.dumps(asdict(scale), indent=2))
            self._seen = os.stat(self._path).st_mtime
        except OSError as exc:  # a full or read-only disk: the scale holds in this process
            log.warning("the memory's scale could not be written to %s: %s", self._path, exc)

    def _refresh(self) -> None:
        if self._path is None:
            return
        try:
            mtime = os.stat(self._path).st_mtime
        except OSError:
            return
        if mtime == self._seen:
            return
        self._seen = mtime
        try:
            scale = Scale(**json.loads(self._path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError) as exc:
            log.warning("the memory's scale %s cannot be read (%s): it will be measured again", self._path, exc)
            return
        if scale.model == self._model:  # another model's cosines are another scale
            self._measured = self._scale = scale
