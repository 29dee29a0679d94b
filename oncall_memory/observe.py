"""What the memory reports as it works: lookups, embedding calls, ingests. The service's `/metrics` listens
(see `service/metrics.py`); anything else gets `UNOBSERVED`."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from .embedders import Embedder
from .ingest.ingest import IngestReport


class Observer(Protocol):
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


UNOBSERVED: Observer = _Unobserved()


class TimedEmbedder(Embedder):
    """An embedder whose every `embed` call is timed and reported (as "lookup" or "ingest")."""

    def __init__(self, embedder: Embedder, purpose: str, observer: Observer):
        self._embedder, self._purpose, self._observer = embedder, purpose, observer

    @property
    def model(self) -> str:  # type: ignore[override]
        return self._embedder.model

    @property
    def dimension(self) -> int:  # type: ignore[override]  # a local model knows it once loaded: asked when needed
        return self._embedder.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            vectors = self._embedder.embed(texts)
        except Exception:
            self._observer.embedded(self._purpose, time.perf_counter() - started, True)
            raise
        self._observer.embedded(self._purpose, time.perf_counter() - started, False)
        return vectors

    def truncate(self, text: str) -> tuple[str, bool]:
        return self._embedder.truncate(text)

    def load(self) -> None:
        self._embedder.load()
