"""OpenAI (or an in-org OpenAI-compatible gateway) embeddings through the official client.

The client retries 429, 5xx, connection errors and timeouts with exponential backoff (and honours
Retry-After). We add:
- requests planned under the endpoint's limits: at most 2,048 inputs and 300,000 tokens in one request
  (tokens counted with tiktoken when its encoding is at hand, else by UTF-8 bytes, a bound that always
  holds), so a batch of long post-mortems is never refused whole;
- a few requests in flight at once (`ONCALL_MEMORY_OPENAI_CONCURRENCY`), paced by the account's own
  limits: the `x-ratelimit-remaining-*` / `x-ratelimit-reset-*` headers of each answer hold the next
  request back until the window has room;
- a check of every response's shape. One failed request fails the whole call: nothing is half-written.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

import openai

from ..errors import EmbeddingFailed, InvalidInput
from ..settings import Settings
from .base import Embedder

_KNOWN_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


class OpenAIEmbedder(Embedder):
    DEFAULT_MODEL = "text-embedding-3-small"
    MAX_INPUTS_PER_REQUEST = 2048  # the API's limit on inputs per embeddings request
    MAX_INPUT_TOKENS = 8191  # the API's limit per input (8,192, less one for safety)
    MAX_REQUEST_TOKENS = 300_000  # the API's limit on the tokens of all inputs of one request
    INGEST_BATCH = 2048  # texts per embed call when ingesting: split here into requests sent side by side

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        model: str = DEFAULT_MODEL,
        dimension: int | None = None,
        batch_size: int = 256,
        max_retries: int = 5,
        timeout: float = 30.0,
        concurrency: int = 4,
    ):
        """`batch_size`: inputs per request (fewer when their tokens would pass the request limit);
        `concurrency`: requests in flight at once within one `embed` call."""
        if not api_key and not base_url:
            raise InvalidInput("the openai embedder needs OPENAI_API_KEY (or OPENAI_BASE_URL for a keyless gateway)")
        if dimension is None:
            if model not in _KNOWN_DIMENSIONS:
                raise InvalidInput(f"unknown dimension for model {model!r}: set ONCALL_MEMORY_EMBED_DIM")
            dimension = _KNOWN_DIMENSIONS[model]
        self.model = model
        self.dimension = dimension
        # Only -3 models accept a shortened dimension; never send it when it is the model's own.
        self._send_dimensions = dimension != _KNOWN_DIMENSIONS.get(model)
        self._batch_size = min(batch_size, self.MAX_INPUTS_PER_REQUEST)
        self._concurrency = max(1, concurrency)
        self._pacer = RateLimitPacer()
        self.ingest_batch = self.INGEST_BATCH
        self._client = openai.OpenAI(
            api_key=api_key or "no-key", base_url=base_url, max_retries=max_retries, timeout=timeout
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIEmbedder:
        return cls(
            api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
            base_url=settings.openai_base_url,
            model=settings.embed_model or cls.DEFAULT_MODEL,
            dimension=settings.embed_dim,
            max_retries=settings.openai_max_retries,
            timeout=settings.openai_timeout,
            concurrency=settings.openai_concurrency,
        )

    def truncate(self, text: str) -> tuple[str, bool]:
        """`text` cut to the model's input limit (8,191 tokens), and whether it was cut. Tokens are counted
        with tiktoken when its encoding is available (it downloads it once); otherwise by UTF-8 bytes, a
        bound that always holds because no token is shorter than one byte."""
        encoding = _encoding(self.model)
        if encoding is not None:
            tokens = encoding.encode(text, disallowed_special=())
            if len(tokens) <= self.MAX_INPUT_TOKENS:
                return text, False
            return encoding.decode(tokens[: self.MAX_INPUT_TOKENS]), True
        data = text.encode("utf-8")
        if len(data) <= self.MAX_INPUT_TOKENS:
            return text, False
        return data[: self.MAX_INPUT_TOKENS].decode("utf-8", errors="ignore"), True

    def close(self) -> None:
        """Close the HTTP connection pool (`Memory` does it for an embedder it built)."""
        self._client.close()

    def tokens(self, text: str) -> int:
        """The tokens `text` costs: counted by tiktoken, else its UTF-8 bytes (never fewer than the tokens)."""
        encoding = _encoding(self.model)
        if encoding is not None:
            return len(encoding.encode(text, disallowed_special=()))
        return len(text.encode("utf-8"))

    def plan(self, texts: Sequence[str]) -> list[tuple[int, int, int]]:
        """Consecutive (start, end, tokens) slices of `texts`, one per request: at most `batch_size` inputs
        and `MAX_REQUEST_TOKENS` tokens each (a text is counted at most at the per-input limit it is cut
        to). Each text is counted once; the request's total is what the pacer holds it back for."""
        slices, start, budget = [], 0, 0
        for i, text in enumerate(texts):
            cost = min(self.tokens(text), self.MAX_INPUT_TOKENS)
            if i > start and (i - start >= self._batch_size or budget + cost > self.MAX_REQUEST_TOKENS):
                slices.append((start, i, budget))
                start, budget = i, 0
            budget += cost
        if start < len(texts):
            slices.append((start, len(texts), budget))
        return slices

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        slices = self.plan(texts)
        if len(slices) <= 1 or self._concurrency == 1:
            return [v for a, b, cost in slices for v in self._request(list(texts[a:b]), cost)]
        with ThreadPoolExecutor(max_workers=min(self._concurrency, len(slices))) as pool:
            futures = [pool.submit(self._request, list(texts[a:b]), cost) for a, b, cost in slices]
            try:
                return [v for f in futures for v in f.result()]  # in order; the first failure raises
            except BaseException:
                for f in futures:
                    f.cancel()  # not yet sent: never sent
                raise

    def _request(self, batch: list[str], cost: int = 0) -> list[list[float]]:
        self._pacer.wait_for(cost)
        try:
            extra: dict[str, Any] = {"dimensions": self.dimension} if self._send_dimensions else {}
            raw = self._client.embeddings.with_raw_response.create(model=self.model, input=batch, **extra)
            self._pacer.update(raw.headers)
            response = raw.parse()
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            # 400/422: the API refused the input itself (context_length_exceeded, an empty string, ...).
            raise EmbeddingFailed(f"{self.model} refused the input: {_reason(exc)}", refused=True) from exc
        except openai.OpenAIError as exc:
            raise EmbeddingFailed(f"embedding request to {self._client.base_url} failed after retries: {exc}") from exc
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise EmbeddingFailed(f"asked {self.model} for {len(batch)} vectors, got {len(data)}; nothing was written")
        for item in data:
            if len(item.embedding) != self.dimension:
                raise EmbeddingFailed(
                    f"{self.model} returned a {len(item.embedding)}-dim vector, expected {self.dimension}; "
                    "nothing was written (is the gateway serving another model?)"
                )
        return [list(item.embedding) for item in data]


class RateLimitPacer:
    """Holds a request back while the account's window is spent, by the headers OpenAI sends with every
    answer (`x-ratelimit-remaining-requests` / `-tokens`, `x-ratelimit-reset-requests` / `-tokens`, e.g.
    "1s", "6m0s", "20ms"). A 429 that comes anyway is retried by the client (it honours Retry-After)."""

    MAX_WAIT = 60.0  # never hold a request longer than this on a header's word

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests_left: float = float("inf")
        self._tokens_left: float = float("inf")
        self._requests_reset_at = 0.0
        self._tokens_reset_at = 0.0

    def update(self, headers: Any) -> None:
        now = time.monotonic()
        with self._lock:
            if (left := _number(headers.get("x-ratelimit-remaining-requests"))) is not None:
                self._requests_left = left
                self._requests_reset_at = now + _duration(headers.get("x-ratelimit-reset-requests"))
            if (left := _number(headers.get("x-ratelimit-remaining-tokens"))) is not None:
                self._tokens_left = left
                self._tokens_reset_at = now + _duration(headers.get("x-ratelimit-reset-tokens"))

    def wait_for(self, tokens: int) -> None:
        """Sleep until a request of `tokens` fits the window (counted against it when it goes)."""
        while True:
            with self._lock:
                now = time.monotonic()
                if now >= self._requests_reset_at:
                    self._requests_left = float("inf")
                if now >= self._tokens_reset_at:
                    self._tokens_left = float("inf")
                wait = 0.0
                if self._requests_left < 1:
                    wait = self._requests_reset_at - now
                if self._tokens_left < tokens:
                    wait = max(wait, self._tokens_reset_at - now)
                if wait <= 0:
                    self._requests_left -= 1
                    self._tokens_left -= tokens
                    return
            time.sleep(min(wait, self.MAX_WAIT))


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(value: str | None) -> float:
    """Seconds in a reset header ("1s", "6m0s", "20ms", "0.5s"); 0 for none or a shape we do not know."""
    if not value:
        return 0.0
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", value)
    return min(sum(float(n) * _UNIT[u] for n, u in parts), RateLimitPacer.MAX_WAIT)


def _reason(exc: openai.APIStatusError) -> str:
    body: Any = exc.body
    if isinstance(body, dict):
        body = body.get("error", body)
        if isinstance(body, dict) and body.get("message"):
            code = f" ({body['code']})" if body.get("code") else ""
            return f"{body['message']}{code}"
    return str(exc)


@cache
def _encoding(model: str) -> Any:
    """tiktoken's encoding for `model`, or None when tiktoken or its (downloaded once) data is not there."""
    try:
        import tiktoken

        return tiktoken.encoding_for_model(model)
    except Exception:  # not installed, unknown model, or no network to fetch the encoding: count bytes
        return None
