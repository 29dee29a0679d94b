"""`Memory`: the one front door. Every entry point (CLI, flow, service, eval, maintenance) opens it
and calls it; nothing else reaches the store.

    with Memory.open(settings) as memory:
        memory.ingest(read_jsonl(path))
        lookup = memory.similar(Alert(text="pods crash looping"))

It owns the store, the embedder and the settings. The collection is created by the first write.
One lock serialises store calls, so a service's request threads, its worker and an in-process
ingest never interleave on the embedded engine; embedding happens outside the lock, so a slow
embedder never holds up a lookup that needs only words, nor a health check.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from . import payload as P
from .alert import Alert, Filters
from .backlog import Rejected
from .backup import Verification, backup, read_manifest, restore_into, verify
from .conditions import Match
from .datadir import ENGINE_HEADROOM, stored_bytes
from .embedders import Embedder, make_embedder
from .errors import InvalidInput, OncallMemoryError
from .feedback import FeedbackStore, Verdict
from .incident import Incident
from .ingest import Embed, IngestReport, IngestStopped, ingest
from .payload import incident_from_payload
from .redact import redact
from .retrieve import Lookup, Retriever, check_limit, make_query
from .settings import Settings
from .signature import canonical_signature
from .stores import IncidentStore, Mode, copy_points, open_edge, open_local, open_store
from .stores.base import IndexReport, IndexState

log = logging.getLogger(__name__)


def feedback_path(settings: Settings) -> str:
    return ":memory:" if str(settings.data_dir) == ":memory:" else str(Path(settings.data_dir) / "feedback.sqlite3")


REINDEX_SUFFIX = "__reindex"
RESTORE_SUFFIX = "__restore"
EMBEDDER_TRUST_SECONDS = 30.0  # how long a readiness probe's verdict on the embedder stands


class Observer(Protocol):
    """What the memory reports as it works (the service's `/metrics` listens; see `service/metrics.py`)."""

    def lookup(self, mode: str, degraded: bool, seconds: float) -> None: ...
    def embedded(self, purpose: str, seconds: float, failed: bool) -> None: ...
    def ingest(self, report: IngestReport, *, stopped: bool) -> None: ...


class _Unobserved:
    def lookup(self, mode: str, degraded: bool, seconds: float) -> None:
        pass

    def embedded(self, purpose: str, seconds: float, failed: bool) -> None:
        pass

    def ingest(self, report: IngestReport, *, stopped: bool) -> None:
        pass


class _TimedEmbedder:
    """The memory's embedder, each `embed` call timed and reported; everything else passed through."""

    def __init__(self, embedder: Embedder, purpose: str, observer: Observer):
        self._embedder, self._purpose, self._observer = embedder, purpose, observer

    def embed(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            vectors = self._embedder.embed(texts)
        except Exception:
            self._observer.embedded(self._purpose, time.perf_counter() - started, True)
            raise
        self._observer.embedded(self._purpose, time.perf_counter() - started, False)
        return vectors

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)


class _Both:
    """Two locks taken in order (and released in reverse) as one context manager, reusable."""

    def __init__(self, first: Any, second: Any):
        self._first, self._second = first, second

    def __enter__(self) -> None:
        self._first.acquire()
        try:
            self._second.acquire()
        except BaseException:
            self._first.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self._second.release()
        self._first.release()


@dataclass(frozen=True)
class LastIngest:
    at: datetime
    new: int
    updated: int
    unchanged: int
    rejected: int
    stopped: bool


@dataclass(frozen=True)
class Readiness:
    ready: bool  # the store answers: lookups work
    detail: str
    degraded: str | None = None  # set when lookups work with less (the embedder is down: words only)


class Memory:
    def __init__(self, store: IncidentStore, embedder: Embedder, settings: Settings, *, owns_embedder: bool = False,
                 feedback: FeedbackStore | None = None):
        self.store = store
        self.feedback = feedback or FeedbackStore(feedback_path(settings))
        self.embedder = embedder
        self.settings = settings
        self._owns_embedder = owns_embedder  # built by `open`: closed with the memory
        self._lock = threading.RLock()
        self._retriever = Retriever(store, weights=settings.weights, candidates=settings.candidates)
        self._contract_checked = False
        self._known: dict[str, set[str]] | None = None
        self._embedder_verdict: tuple[float, str | None] = (0.0, None)  # (valid until, problem)
        self.observer: Observer = _Unobserved()
        self._index_building = threading.Lock()  # one index build at a time; reindex and restore wait for it
        # Held by every write to the store (with the lock) and by an index build while it copies: a build
        # holds writes back without holding lookups back.
        self._write_gate = threading.Lock()
        self._writing = _Both(self._write_gate, self._lock)
        self._last_ingest: LastIngest | None = None

    @classmethod
    def open(cls, settings: Settings, *, embedder: Embedder | None = None) -> Memory:
        """Open the store the settings name with their embedder (or `embedder`, which stays the caller's)."""
        own = embedder is None
        embedder = embedder or make_embedder(settings)
        return cls(open_store(settings), embedder, settings, owns_embedder=own)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self.store.close()
            self.feedback.close()
        close_embedder = getattr(self.embedder, "close", None) if self._owns_embedder else None
        if close_embedder:
            close_embedder()

    # -- lookups --------------------------------------------------------------------------------

    def similar(
        self,
        alert: Alert,
        *,
        filters: Filters | None = None,
        limit: int = 5,
        mode: Mode = "hybrid",
        rank: bool = True,
        now: datetime | None = None,
    ) -> Lookup:
        """The `limit` past incidents most like `alert` (see `Retriever.search`).

        Raises `InvalidInput` for a limit outside 1..100, `StoreUnavailable` when nothing was ingested,
        `ContractMismatch` when the collection was built with another model.
        """
        check_limit(limit)
        started = time.perf_counter()
        with self._lock:
            self._check_contract()
        query = make_query(alert, _TimedEmbedder(self.embedder, "lookup", self.observer), mode)  # outside the lock
        tallies = self.feedback.tallies(query.signature_key) if rank else {}
        with self._lock:
            lookup = self._retriever.search(query, filters=filters, limit=limit, rank=rank, now=now, feedback=tallies)
        self.observer.lookup(lookup.mode, lookup.degraded is not None, time.perf_counter() - started)
        return lookup

    def record_feedback(self, alert: Alert, suggested: str, verdict: Verdict, *, who: str,
                        at: datetime | None = None, ref: str | None = None) -> bool:
        """Store a responder's verdict on `suggested` for this alert (see `feedback.py`). Raises `InvalidInput`
        for an alert with no text or an unknown verdict."""
        key = canonical_signature(alert.signature or alert.text, [alert.env])
        if key is None:
            raise InvalidInput("feedback needs the alert it was about: its text or its signature")
        try:  # who and the suggestion come from a person or an agent: redacted as they enter
            return self.feedback.record(key, redact(suggested), verdict, who=redact(who), at=at,
                                        ref=redact(ref) if ref else ref)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from exc

    def incident(self, incident_id: str) -> dict[str, Any] | None:
        """Everything stored about one incident (by its id), or None."""
        with self._lock:
            if not self.store.exists():
                return None
            hits = self.store.find([Match(P.INCIDENT_ID, incident_id)], limit=1)
        return hits[0].payload if hits else None

    def neighbours_of(self, incident: dict[str, Any], *, limit: int = 5) -> Lookup:
        """The incidents most like this stored one (itself left out), as if it fired again."""
        alert = Alert(text=incident.get(P.TEXT) or incident["title"], service=incident.get(P.SERVICE),
                      env=incident.get(P.ENV), flavor=incident.get(P.FLAVOR), component_tags=incident.get(P.TAGS) or [])
        lookup = self.similar(alert, limit=min(limit + 1, 100))
        lookup.neighbours = [n for n in lookup.neighbours if n.id != incident.get(P.INCIDENT_ID)][:limit]
        return lookup

    def known_values(self) -> dict[str, set[str]]:
        """The services, envs and flavors the memory has incidents of (to recognise them in an alert's
        text); read from the payload indexes, cached until the next ingest."""
        with self._lock:
            if self._known is None:
                fields = (P.SERVICE, P.ENV, P.FLAVOR)
                self._known = {f: set(self.store.values(f)) for f in fields} if self.store.exists() else {}
            return self._known

    def _check_contract(self) -> None:
        if not self._contract_checked:
            self.store.check_contract(self.embedder.model, self.embedder.dimension)
            self._contract_checked = True

    # -- writes ---------------------------------------------------------------------------------

    def ingest(
        self,
        items: Iterable[Incident | Rejected],
        *,
        embed: Embed | None = None,
        on_batch: Callable[[int, int], None] | None = None,
    ) -> IngestReport:
        """Store a backlog (see `ingest.ingest`). Raises `IngestStopped` when a batch cannot be embedded."""
        embedder = _TimedEmbedder(self.embedder, "ingest", self.observer)
        try:
            report = ingest(items, self.store, embedder, embed=embed, batch_size=self.settings.embed_batch_size,
                            lock=self._writing, on_batch=on_batch, room=self._room_for)
        except IngestStopped as exc:
            self._ingested(exc.report, stopped=True)
            raise
        self._ingested(report, stopped=False)
        return report

    def _room_for(self, points: int) -> None:
        """Raise `DiskFull` unless the data dir's disk can take `points` more incidents (and the engine's
        next 32 MB chunk); checked before each batch is written."""
        if points and self.store.disk_path is not None:
            per_point = self.embedder.dimension * 4 * 2 + 8192  # vector, its copy in the log, payload, terms
            self.settings.dir.need_for_store(self.store.disk_path, writing=points * per_point,
                                             doing=f"store {points} incidents")

    def _ingested(self, report: IngestReport, *, stopped: bool) -> None:
        self._record_written(report.new)
        last = LastIngest(datetime.now(UTC), report.new, report.updated, report.unchanged, report.rejected, stopped)
        self._last_ingest = last
        if path := self._last_ingest_file():  # so a service sees the scheduled flow's runs too
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps({**asdict(last), "at": last.at.isoformat()}))
                tmp.replace(path)
            except OSError as exc:  # a read-only data dir loses the status line, not the ingest
                log.warning("could not record the last ingest in %s: %s", path, exc)
        self.observer.ingest(report, stopped=stopped)

    @property
    def last_ingest(self) -> LastIngest | None:
        """The last ingest into this memory: by this process, or by any other using the same data dir
        (the scheduled flow, a CLI run)."""
        path = self._last_ingest_file()
        if path is None or not path.exists():
            return self._last_ingest
        try:
            raw = json.loads(path.read_text())
            return LastIngest(**{**raw, "at": datetime.fromisoformat(raw["at"])})
        except (OSError, ValueError, TypeError, KeyError):  # a torn or foreign file: what this process knows
            return self._last_ingest

    def _last_ingest_file(self) -> Path | None:
        data_dir = str(self.settings.data_dir)
        return None if data_dir == ":memory:" else Path(data_dir) / f"last_ingest-{self.store.collection}.json"

    def _record_written(self, new: int) -> None:
        """Keep the count of points written beside the engine's files: `verify` compares the engine with it."""
        with self._lock:
            self._known = None
            if not self.store.exists():
                return
            before = self.store.expected_count()
            if before is None:
                self.store.record_count(self.store.count())
            elif new:
                self.store.record_count(before + new)

    # -- what the memory holds ------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Collection, location, contract and count. Raises `InvalidInput` when nothing was ingested."""
        with self._lock:
            if not self.store.exists():
                raise InvalidInput(
                    f"no collection {self.store.collection!r} at {self.store.location}: run `oncall-memory ingest`"
                )
            return {"collection": self.store.collection, "location": self.store.location,
                    **self.store.contract(), "count": self.store.count()}

    def ready(self) -> Readiness:
        """Can this memory answer? Ready while the store answers; an unreachable embedder makes it
        degraded (lookups fall back to words), not unready. The embedder's verdict stands 30 s."""
        try:
            with self._lock:
                count = self.store.count() if self.store.exists() else 0
        except Exception as exc:  # any store failure means not ready; say which
            return Readiness(False, f"store unavailable: {exc}")
        valid_until, problem = self._embedder_verdict
        if time.monotonic() > valid_until:
            try:
                self.embedder.embed(["readiness probe"])
                problem = None
            except Exception as exc:
                problem = f"embedder unavailable ({exc}): lookups use words only"
            self._embedder_verdict = (time.monotonic() + EMBEDDER_TRUST_SECONDS, problem)
        return Readiness(True, f"{count} incidents, model {self.embedder.model}", problem)

    # -- the vector index -----------------------------------------------------------------------

    def index_state(self) -> IndexState | None:
        """How many incidents are stored and how many of them are in the vector index; None before the
        first ingest."""
        with self._lock:
            return self.store.index_state() if self.store.exists() else None

    def index_due(self) -> bool:
        """Should `build_index` run: past `index_threshold` incidents, with a tenth of them unindexed."""
        state = self.index_state()
        return state is not None and state.due(self.settings.index_threshold)

    def build_index(self, *, force: bool = False) -> IndexReport | None:
        """Build the store's vector index beside the live collection and swap it in, when due (or `force`).

        Lookups go on throughout except for the swap itself (closing the old collection and opening the
        new one; `swap_seconds` in the report). Writes wait while the collection is copied and while what
        was written during the build is copied into the new one. The build runs in another process.
        None when there was nothing to do or another build is running.
        """
        if not self._index_building.acquire(blocking=False):
            return None
        try:
            with self._write_gate:
                with self._lock:
                    state = self.store.index_state() if self.store.exists() else None
                    if state is None or not (force or state.due(self.settings.index_threshold)):
                        return None
                    if self.store.disk_path is not None:  # the copy, then the engine's optimized segments
                        self.settings.dir.need(2 * stored_bytes(self.store.disk_path) + ENGINE_HEADROOM,
                                               "build the vector index (on a copy of the store)")
                    job = self.store.begin_index()
                try:
                    self.store.copy_for_index(job)
                except BaseException:
                    with self._lock:
                        self.store.abandon_index(job)
                    raise
            try:
                self.store.build_index(job)
                with self._write_gate:
                    self.store.replay_into_index(job, self._lock)
                    with self._lock:
                        return self.store.finish_index(job)
            except BaseException:
                with self._lock:
                    self.store.abandon_index(job)
                raise
        finally:
            self._index_building.release()

    # -- maintenance ----------------------------------------------------------------------------

    def reindex(self) -> IngestReport:
        """Rebuild the collection with this memory's embedder from the incidents stored in it (the
        payload holds every field), beside the old one, swapped in only when complete.

        A failure at any point before the swap drops the half-built collection and leaves the old one.
        Waits for an index build under way (both replace the collection).
        """
        with self._index_building:
            return self._reindex()

    def _reindex(self) -> IngestReport:
        with self._lock:
            if not self.store.exists():
                raise InvalidInput(f"no collection {self.store.collection!r} at {self.store.location} to reindex")
            incidents = [incident_from_payload(payload) for _, payload, _ in self.store.points()]
            temp = self.store.sibling(self.store.collection + REINDEX_SUFFIX)
        try:
            with self._lock:
                if temp.exists():
                    temp.drop()  # a half-built one from an earlier failed reindex
            report = ingest(incidents, temp, self.embedder, batch_size=self.settings.embed_batch_size, lock=self._lock)
            with self._lock:
                if temp.count() != len(incidents):
                    raise OncallMemoryError(f"reindex built {temp.count()} incidents, expected {len(incidents)}")
        except BaseException:
            with self._lock:
                temp.drop()
                temp.close()
            raise
        with self._lock:
            self.store.swap_in(temp)
            self.store.record_count(self.store.count())
            self._contract_checked = False
        return report

    def verify(self) -> Verification:
        """Read every point and check it against the contract (see `backup.verify`)."""
        with self._lock:
            return verify(self.store)

    def backup(self, path: Path) -> dict[str, Any]:
        """A consistent copy of every point into the new directory `path` (writes wait meanwhile)."""
        with self._lock:
            return backup(self.store, path)

    @staticmethod
    def restore(settings: Settings, path: Path) -> int:
        """Put the backup at `path` in place of the collection, even one too damaged to open: built beside,
        checked against the backup's count, then swapped in. Returns the points restored."""
        manifest = read_manifest(path)
        with open_store(settings, load=False) as store:
            temp = store.sibling(store.collection + RESTORE_SUFFIX)
            try:
                if temp.exists():
                    temp.drop()
                written = restore_into(temp, path, manifest)
                if written != manifest["count"] or temp.count() != manifest["count"]:
                    raise OncallMemoryError(f"restored {temp.count()} points, the backup holds {manifest['count']}")
            except BaseException:
                temp.drop()
                temp.close()
                raise
            store.swap_in(temp)
            store.record_count(manifest["count"])
            return written

    @staticmethod
    def migrate(settings: Settings) -> int:
        """Copy the local-mode store under the data dir into the Edge engine there, vectors and all:
        no embedding call. Returns the points copied.

        Raises `InvalidInput` when there is nothing to copy or the Edge collection already holds incidents.
        """
        with open_local(settings) as source, open_edge(settings) as target:
            if not source.exists():
                raise InvalidInput(f"no local-mode collection {settings.collection!r} at {source.location} to migrate")
            if target.exists() and target.count():
                raise InvalidInput(
                    f"the edge collection at {target.location} already holds {target.count()} incidents; "
                    "move it away first (migrate never overwrites)"
                )
            copied = copy_points(source, target)
            if target.count() != source.count():
                raise OncallMemoryError(f"copied {copied} points but the edge store holds {target.count()}")
            target.record_count(copied)
            return copied
