"""The one error hierarchy. Every message says what the user should do next."""


class OncallMemoryError(Exception):
    """Base of every error oncall-memory raises on purpose."""


class InvalidInput(OncallMemoryError):
    """The user gave something we cannot use (an empty alert, an unknown filter, a bad limit)."""


class EmbeddingFailed(OncallMemoryError):
    """The embedder could not produce vectors, or produced the wrong ones. Nothing was written."""


class ContractMismatch(OncallMemoryError):
    """The collection was built with another embedding model or dimension."""


class StoreUnavailable(OncallMemoryError):
    """The vector store cannot be opened (locked by another process, unreachable server, no collection)."""


class SourceFailed(OncallMemoryError):
    """An incident source (PagerDuty, ...) could not be read after retries."""
