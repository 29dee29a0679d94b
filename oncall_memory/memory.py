"""`Memory`: the one front door. Every entry point (CLI, flow, service, eval, maintenance) opens it
and calls it; nothing else reaches the store.

    with Memory.open(settings) as memory:
        memory.ingest(read_jsonl(path))
        lookup = memory.similar(Alert(text="pods crash looping"))

It owns the store (behind `guard.GuardedStore`'s locks), the embedder, the feedback store and the
settings. The collection is created by the first write. Embedding happens outside the locks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from .answer.calibration import TeamCalibration
from .answer.confidence import overall
from .answer.feedback import FeedbackStore, unknown_incident
from .answer.retrieve import Lookup, Retriever, check_limit, make_query
from .answer.scale import MemoryScale, Scale
from .domain import payload as P
from .domain.alert import Alert, Filters
from .domain.conditions import Match
from .domain.incident import Incident
from .domain.rejected import Rejected
from .domain.signature import canonical_signature
from .embedders import Embedder, make_embedder
from .errors import InvalidInput, NotFound
from .ingest import last_ingest
from .ingest import maintenance as M
from .ingest.ingest import Embed, IngestReport, IngestStopped, ingest
from .ingest.last_ingest import LastIngest
from .observe import UNOBSERVED, Observer, TimedEmbedder
from .settings import Settings
from .store.backup import Verification, backup, verify_against
from .store.engines import IncidentStore, Mode, open_store
from .store.engines.base import IndexReport, IndexState
from .store.guard import GuardedStore
from .store.readiness import EmbedderProbe, Readiness


class Memory:
    def __init__(
        self,
        store: IncidentStore,
        embedder: Embedder,
        settings: Settings,
        *,
        owns_embedder: bool = False,
        feedback: FeedbackStore | None = None,
    ):
        self._guard = GuardedStore(store)
        self._store = store
        self.feedback = feedback or FeedbackStore(settings.dir.feedback)
        self.embedder = embedder
        self.settings = settings
        self.observer: Observer = UNOBSERVED
        self._owns_embedder = owns_embedder  # built by `open`: closed with the memory
        self.scale = MemoryScale(settings.dir.file(f"scale-{store.collection}.json"), embedder.model)
        self.calibration = TeamCalibration.of(embedder.model, settings, self.feedback, self.scale)
        self._retriever = Retriever(store, settings.weights, settings.candidates, self.calibration, self.scale)
        self._embedder_probe = EmbedderProbe(embedder)
        self._batch = settings.embed_batch_size or embedder.ingest_batch  # texts per embedding call
        self._last_ingest: LastIngest | None = None

    @classmethod
    def open(cls, settings: Settings, *, embedder: Embedder | None = None) -> Memory:
        """Open the store the settings name with their embedder (or `embedder`, which stays the caller's)."""
        own = embedder is None
        return cls(open_store(settings), embedder or make_embedder(settings), settings, owns_embedder=own)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._guard.close()
        self.feedback.close()
        if self._owns_embedder:
            self.embedder.close()

    @property
    def location(self) -> str:
        """Where the collection lives, for messages: a path or a server URL."""
        return self._store.location

    # -- lookups --------------------------------------------------------------------------------

    def check_contract(self) -> None:
        """`NothingStored` / `ContractMismatch` at once, before any model work (a local model loads in seconds)."""
        self._guard.ensure_contract(self.embedder)

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
        """The `limit` past incidents most like `alert` (see `Retriever.search`). Raises `InvalidInput` for a
        limit outside 1..100, `NothingStored` before any ingest, `ContractMismatch` for another model's."""
        check_limit(limit)
        started = time.perf_counter()
        self.check_contract()
        query = make_query(alert, TimedEmbedder(self.embedder, "lookup", self.observer), mode)  # outside the lock
        tallies = self.feedback.tallies(query.signature_key) if rank else {}
        with self._guard.looking_up():
            lookup = self._retriever.search(query, filters=filters, limit=limit, rank=rank, now=now, feedback=tallies)
        self.observer.lookup(lookup.mode, lookup.degraded is not None, time.perf_counter() - started)
        return lookup

    def record_feedback(
        self,
        alert: Alert,
        suggested: str,
        verdict: str,
        *,
        who: str,
        at: datetime | None = None,
        ref: str | None = None,
    ) -> bool:
        """Store a responder's verdict on `suggested` for this alert (see `feedback.py`). Raises `InvalidInput`
        for an alert with no text, an unknown verdict, or an incident it does not hold (on every surface)."""
        key = canonical_signature(alert.signature or alert.text, [alert.env])
        if key is None:
            raise InvalidInput("feedback needs the alert it was about: its text or its signature")
        if self.incident(suggested) is None:
            raise NotFound(unknown_incident(suggested))
        recorded = self.feedback.record(key, suggested, verdict, who=who, at=at, ref=ref)
        self.calibration.verdict(key, suggested, lambda: self.similar(alert, limit=50).neighbours)
        return recorded

    def offer(self, lookup: Lookup, suggested: str) -> str | None:
        """A feedback button's token for "`suggested` was offered for this alert" (see `feedback.offer`)."""
        if not (key := lookup.signature_key):
            return None
        self.calibration.offered(key, lookup.neighbours, suggested)  # what it is offered on, for a verdict
        return self.feedback.offer(key, suggested)

    def incident(self, incident_id: str) -> dict[str, Any] | None:
        """Everything stored about one incident (by its id), or None."""
        with self._guard.lock:
            if not self._store.exists():
                return None
            hits = self._store.find([Match(P.INCIDENT_ID, incident_id)], limit=1)
        return hits[0].payload if hits else None

    def neighbours_of(self, incident: dict[str, Any], *, limit: int = 5) -> Lookup:
        """The incidents most like this stored one (itself left out), as if it fired again."""
        lookup = self.similar(Alert.again(incident), limit=min(limit + 1, 100))
        lookup.neighbours = [n for n in lookup.neighbours if n.id != incident.get(P.INCIDENT_ID)][:limit]
        # As sure as the best of the others: the incident itself was the sure match.
        lookup.confidence = overall([n.confidence for n in lookup.neighbours])
        return lookup

    def known_values(self) -> dict[str, set[str]]:
        """The services, envs and flavors the memory has incidents of (to recognise them in an alert's
        text); read from the payload indexes, cached until the next ingest."""
        return self._guard.known_values((P.SERVICE, P.ENV, P.FLAVOR))

    # -- writes ---------------------------------------------------------------------------------

    def ingest(
        self,
        items: Iterable[Incident | Rejected],
        *,
        embed: Embed | None = None,
        on_batch: Callable[[int, int], None] | None = None,
    ) -> IngestReport:
        """Store a backlog (see `ingest.ingest`). Raises `IngestStopped` when a batch cannot be embedded,
        `DiskFull` when the disk cannot take the next batch."""
        embedder = TimedEmbedder(self.embedder, "ingest", self.observer)
        try:
            with self._guard.first_write():
                report = ingest(
                    items,
                    self._store,
                    embedder,
                    embed=embed,
                    batch_size=self._batch,
                    lock=self._guard.writing,
                    on_batch=on_batch,
                    room=lambda points: self.settings.dir.need_for_points(
                        self._store.disk_path, points, self.embedder.dimension
                    ),
                )
        except IngestStopped as exc:
            self._ingested(exc.report, stopped=True)
            raise
        self._ingested(report, stopped=False)
        # Once it changed by a tenth or never was (a reindex, an older memory); never for nothing (one embed call).
        if (report.new or self.scale.unmeasured) and self.calibration.current.reads("standing"):
            self.measure_scale(when_due=True)
        return report

    def measure_scale(self, *, when_due: bool = False) -> Scale | None:
        """Measure what meaning reads like in this memory and keep it (`scale.MemoryScale.measure`)."""
        return self.scale.measure(self._store, self.embedder, self._guard.lock, when_due=when_due)

    def _ingested(self, report: IngestReport, *, stopped: bool) -> None:
        self._guard.count_written(report.new)
        self._last_ingest = LastIngest.of(report, stopped=stopped)
        last_ingest.record(self.settings.dir.last_ingest(self._store.collection), self._last_ingest)
        self.observer.ingest(report, stopped=stopped)

    @property
    def last_ingest(self) -> LastIngest | None:
        """The last ingest into this memory: by this process, or by any other using the same data dir."""
        return last_ingest.read(self.settings.dir.last_ingest(self._store.collection)) or self._last_ingest

    # -- what the memory holds ------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Collection, location, contract and count. Raises `InvalidInput` when nothing was ingested."""
        return self._guard.stats()

    def payloads(self) -> dict[str, dict[str, Any]]:
        """Every incident's payload by id (`text`: what lookups read). Reads every point: for evals."""
        with self._guard.lock:
            return {p[P.INCIDENT_ID]: p for _, p, _ in self._store.points()} if self._store.exists() else {}

    def ready(self) -> Readiness:
        """Ready while the store answers; an unreachable embedder degrades lookups to words (`readiness.py`)."""
        return self._guard.readiness(self._embedder_probe)

    # -- the vector index -----------------------------------------------------------------------

    def index_state(self) -> IndexState | None:
        """Incidents stored and indexed; None before the first ingest or where the engine indexes itself."""
        return self._guard.index_state()

    def index_due(self) -> bool:
        """Should `build_index` run: past `index_threshold` incidents, with a tenth of them unindexed."""
        return (state := self.index_state()) is not None and state.due(self.settings.index_threshold)

    def keep_ranking_fields(self) -> None:
        """For the service: what its lookups read, kept in memory (`GuardedStore.keep_in_memory`)."""
        self._guard.keep_in_memory()

    def build_index(self, *, force: bool = False) -> IndexReport | None:
        """Build the vector index beside the live collection when due (or `force`): `GuardedStore.build_index`."""
        return self._guard.build_index(
            lambda state: force or state.due(self.settings.index_threshold),
            lambda: self.settings.dir.need_for_index_build(self._store.disk_path),
        )

    # -- maintenance ----------------------------------------------------------------------------

    def reindex(self) -> IngestReport:
        """Rebuild the collection with this memory's embedder, beside the old one (see `maintenance.reindex`)."""
        report = M.reindex(self._guard, self.embedder, batch_size=self._batch)
        self._guard.forget_contract()
        return report

    def verify(self, source: Iterable[Incident | tuple[str, str]] | None = None) -> Verification:
        """Check every point against the contract and a backlog's incidents (or (source, id) pairs)."""
        with self._guard.lock:
            return verify_against(self._store, source)

    def backup(self, path: Path) -> dict[str, Any]:
        """A consistent copy of every point into the new directory `path` (writes wait meanwhile)."""
        with self._guard.lock:
            return backup(self._store, path)

    restore = staticmethod(M.restore)
    migrate = staticmethod(M.migrate)
