"""The embedder seam: texts in, vectors out. Everything else (batching for writes, hashing, counting) lives outside."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..errors import InvalidInput
from ..settings import Settings


@runtime_checkable
class Embedder(Protocol):
    """One method. `model` and `dimension` are the contract a collection is built with."""

    model: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector of `dimension` floats per text, in order. Raises `EmbeddingFailed`
        (with `refused=True` when the model rejected the input itself)."""
        ...


def truncate(embedder: Embedder, text: str) -> tuple[str, bool]:
    """`text` as the model will take it, and whether it was cut. An embedder that knows its input limit
    says so with an optional `truncate(text)`; one without it takes any length (the fake)."""
    fit = getattr(embedder, "truncate", None)
    return fit(text) if fit else (text, False)


def make_embedder(settings: Settings) -> Embedder:
    """Build the embedder the settings name. Imports are local so a missing optional extra only
    matters to the one who asked for it."""
    if settings.embedder == "fake":
        from .fake import FakeEmbedder

        return FakeEmbedder(dimension=settings.embed_dim or FakeEmbedder.DEFAULT_DIMENSION)
    if settings.embedder == "openai":
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)
    if settings.embedder == "local":
        from .local import LocalEmbedder

        return LocalEmbedder(settings.embed_model or LocalEmbedder.DEFAULT_MODEL, cache=settings.dir.models)
    raise InvalidInput(f"unknown embedder {settings.embedder!r}: use openai, local or fake")
