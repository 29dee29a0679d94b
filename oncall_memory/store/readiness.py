"""Can the memory answer? The store decides ready or not; the embedder only degraded or not, since a
lookup without it still answers by words. Probing the embedder costs a call (money, with OpenAI), so its
verdict stands a while."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..embedders import Embedder

EMBEDDER_TRUST_SECONDS = 30.0  # how long a probe's verdict on the embedder stands


@dataclass(frozen=True)
class Readiness:
    ready: bool  # the store answers: lookups work
    detail: str
    degraded: str | None = None  # set when lookups work with less (the embedder is down: words only)


class EmbedderProbe:
    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self._verdict: tuple[float, str | None] = (0.0, None)  # (valid until, problem)

    def problem(self) -> str | None:
        """None while the embedder answers, else why lookups use words only; re-asked every 30 s at most."""
        valid_until, problem = self._verdict
        if time.monotonic() > valid_until:
            try:
                self.embedder.embed(["readiness probe"])
                problem = None
            except Exception as exc:  # any failure: the verdict names it
                problem = f"embedder unavailable ({exc}): lookups use words only"
            self._verdict = (time.monotonic() + EMBEDDER_TRUST_SECONDS, problem)
        return problem
