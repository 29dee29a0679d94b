"""The one error hierarchy. Every message says what the user should do next."""


class OncallMemoryError(Exception):
    """Base of every error oncall-memory raises on purpose."""


class InvalidInput(OncallMemoryError):
    """The user gave something we cannot use (an empty alert, an unknown filter, a bad limit)."""


class NotFound(InvalidInput):
    """What the user named is not on record (an incident id): HTTP 404, exit 2."""


class EmbeddingFailed(OncallMemoryError):
    """The embedder could not produce vectors, or produced the wrong ones. Nothing was written.

    `refused` says the embedder rejected this input itself (too long, empty, malformed): trying again
    will not help, and ingest isolates the incident that caused it instead of failing the batch.
    """

    def __init__(self, message: str, *, refused: bool = False):
        super().__init__(message)
        self.refused = refused


class ContractMismatch(OncallMemoryError):
    """The collection was built with another embedding model or dimension."""


class StoreUnavailable(OncallMemoryError):
    """The vector store cannot be opened (locked by another process, unreachable server, no collection)."""


class NothingStored(StoreUnavailable):
    """Nothing was ingested here yet: the same answer (exit 1, HTTP 503) from every command and route."""


class StoreDamaged(StoreUnavailable):
    """The store's files could not be read (truncated, overwritten, a disk fault)."""


class SourceFailed(OncallMemoryError):
    """An incident source (PagerDuty, ...) could not be read after retries. `permanent`: it refused the
    request itself (a 404 for an incident it does not have): asking again will not help."""

    def __init__(self, message: str, *, permanent: bool = False):
        super().__init__(message)
        self.permanent = permanent


class DiskFull(OncallMemoryError):
    """The disk under the data dir has no room for what was about to be written. Nothing was written."""


class PluginError(InvalidInput):
    """An installed integration could not be loaded, or offers a hook the contract does not have (a misspelt
    name, arguments the spec lacks): one line naming it and what to fix. The other integrations load."""
