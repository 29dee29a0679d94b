"""OpenAI (or an in-org OpenAI-compatible gateway) embeddings through the official client.

The client retries 429, 5xx, connection errors and timeouts with exponential backoff (and honours
Retry-After); we add request batching under the API's input limit and check every response's shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import openai

from ..errors import EmbeddingFailed, InvalidInput
from ..settings import Settings

_KNOWN_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


class OpenAIEmbedder:
    DEFAULT_MODEL = "text-embedding-3-small"
    MAX_INPUTS_PER_REQUEST = 2048  # the API's limit on inputs per embeddings request

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

    def close(self) -> None:
        """Close the HTTP connection pool (`Memory` does it for an embedder it built)."""
        self._client.close()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._request(list(texts[start : start + self._batch_size])))
        return vectors

    def _request(self, batch: list[str]) -> list[list[float]]:
        extra = {"dimensions": self.dimension} if self._send_dimensions else {}
        try:
            response = self._client.embeddings.create(model=self.model, input=batch, **extra)
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
