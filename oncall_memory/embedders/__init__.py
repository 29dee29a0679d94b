"""The embedder seam (`base.Embedder`: texts in, vectors out) and the factory. Everything else (batching
for writes, hashing, counting) lives outside."""

from __future__ import annotations

from ..errors import InvalidInput
from ..settings import Settings
from .base import Embedder

__all__ = ["Embedder", "make_embedder"]


def make_embedder(settings: Settings, *, threads: int | None = None) -> Embedder:
    """Build the embedder the settings name. Imports are local so a missing optional extra only
    matters to the one who asked for it. `threads`: the local model's (None: one per core)."""
    if settings.embedder == "fake":
        from .fake import FakeEmbedder

        return FakeEmbedder(dimension=settings.embed_dim or FakeEmbedder.DEFAULT_DIMENSION)
    if settings.embedder == "openai":
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)
    if settings.embedder == "local":
        from .local import LocalEmbedder

        return LocalEmbedder(
            settings.embed_model or LocalEmbedder.DEFAULT_MODEL,
            cache=settings.dir.models,
            precision=settings.local_precision,
            threads=threads,
        )
    raise InvalidInput(f"unknown embedder {settings.embedder!r}: use openai, local or fake")
