"""A deterministic embedder for tests and benchmarks: no network, no model, records its calls.

Vectors are hashed bags of words, so texts that share words are near each other: enough for tests
to assert on ordering without pretending to understand meaning.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from ..domain.lexical import terms
from ..errors import EmbeddingFailed
from .base import Embedder


class FakeEmbedder(Embedder):
    DEFAULT_DIMENSION = 64

    def __init__(self, dimension: int = DEFAULT_DIMENSION, *, model: str = "fake-bow", fail_calls: Sequence[int] = ()):
        self.model = model
        self.dimension = dimension
        self.calls: list[list[str]] = []  # every call's texts, in order
        self._fail_calls = set(fail_calls)  # 1-based call numbers that raise, to play an outage

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if len(self.calls) in self._fail_calls:
            raise EmbeddingFailed(f"fake embedder told to fail on call {len(self.calls)}")
        return [self._vector(t) for t in texts]

    def _vector(self, text: str) -> list[float]:
        vec = np.zeros(self.dimension)
        vec[0] = 0.05  # keeps an empty text from being the zero vector, which has no direction
        for term in terms(text):
            h = zlib.crc32(term.encode())
            vec[h % self.dimension] += 1.0 if (h >> 16) & 1 else -1.0
        return (vec / np.linalg.norm(vec)).tolist()
