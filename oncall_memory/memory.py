"""The memory as one long-lived, thread-safe object: for a process that serves lookups and ingests.

The embedded store has one owner; inside that owner, one lock serialises lookups and writes so the
web service's request threads, its background worker and an in-process ingest never interleave.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from .alert import Alert, Filters
from .backlog import Rejected
from .embedders import Embedder, make_embedder
from .incident import Incident
from .ingest import IngestReport, ingest
from .retrieve import Lookup, Retriever
from .settings import Settings
from .storage import open_store
from .store import IncidentStore, Mode


class Memory:
    def __init__(self, store: IncidentStore, embedder: Embedder, settings: Settings):
        self.store = store
        self.embedder = embedder
        self._settings = settings
        self._lock = threading.RLock()
        store.ensure_collection(embedder.model, embedder.dimension)
        self._retriever = Retriever(store, embedder, weights=settings.weights, candidates=settings.candidates)
        self._embedder_ok_until = 0.0

    @classmethod
    def open(cls, settings: Settings) -> Memory:
        store = open_store(settings)
        try:
            return cls(store, make_embedder(settings), settings)
        except BaseException:
            store.close()
            raise

    def close(self) -> None:
        with self._lock:
            self.store.close()

    def similar(
        self, alert: Alert, *, filters: Filters | None = None, limit: int = 5, mode: Mode = "hybrid", rank: bool = True
    ) -> Lookup:
        with self._lock:
            return self._retriever.similar(alert, filters=filters, limit=limit, mode=mode, rank=rank)

    def ingest(self, items: Iterable[Incident | Rejected]) -> IngestReport:
        with self._lock:
            return ingest(items, self.store, self.embedder, batch_size=self._settings.embed_batch_size)

    def ready(self) -> tuple[bool, str]:
        """Is the store answering and the embedder reachable? An embedder success is trusted for 30 s."""
        try:
            with self._lock:
                count = self.store.count()
        except Exception as exc:  # any store failure means not ready; say which
            return False, f"store unavailable: {exc}"
        if time.monotonic() > self._embedder_ok_until:
            try:
                self.embedder.embed(["readiness probe"])
            except Exception as exc:
                return False, f"embedder unavailable: {exc}"
            self._embedder_ok_until = time.monotonic() + 30
        return True, f"{count} incidents, model {self.embedder.model}"
