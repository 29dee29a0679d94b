"""OpenAI (or an in-org OpenAI-compatible gateway) embeddings through the official client.

The client retries 429, 5xx, connection errors and timeouts with exponential backoff (and honours
Retry-After); we add request batching under the API's input limit and check every response's shape.
"""

from __future__ import annotations

from collections.abc import Sequence
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

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        model: str = DEFAULT_MODEL,
        dimension: int | None = None,
        batch_size: int = 512,
        max_retries: int = 5,
        timeout: float = 30.0,
    ):
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

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._request(list(texts[start : start + self._batch_size])))
        return vectors

    def _request(self, batch: list[str]) -> list[list[float]]:
        try:
            if self._send_dimensions:
                response = self._client.embeddings.create(model=self.model, input=batch, dimensions=self.dimension)
            else:
                response = self._client.embeddings.create(model=self.model, input=batch)
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
