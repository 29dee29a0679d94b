"""The embedder seam: one method to implement, `embed(texts) -> vectors` (httpx's `BaseTransport` has one
method too and a default `close()`). What only some embedders need has a default here, so callers call
it on any of them: `truncate` (a model with an input limit cuts to it), `load` (a model loaded lazily
loads now), `close` (a client releases its connections).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence


class Embedder(ABC):
    """`model` and `dimension` are the contract a collection is built with."""

    model: str
    dimension: int
    ingest_batch: int = 64  # texts per `embed` call when ingesting that keep this embedder busiest

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector of `dimension` floats per text, in order. Raises `EmbeddingFailed` (with
        `refused=True` when the model rejected the input itself)."""

    def truncate(self, text: str) -> tuple[str, bool]:
        """`text` as the model will take it, and whether it was cut. By default any length is taken."""
        return text, False

    def load(self) -> None:  # noqa: B027 - a default, not a missing abstract method
        """Load whatever is loaded on first use, now (to keep it out of a timed lookup). By default nothing."""

    def close(self) -> None:  # noqa: B027 - a default, not a missing abstract method
        """Release what the embedder holds (connections). By default nothing."""

    def __enter__(self) -> Embedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
