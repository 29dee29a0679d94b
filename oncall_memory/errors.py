"""The one error hierarchy. Every message says what the user should do next.

Every error oncall-memory raises on purpose is an `OncallMemoryError` (a bug is anything else):

    OncallMemoryError
    ├── InvalidInput ·························· exit 2, HTTP 422: the user can fix what they gave
    │   ├── NotFound ·························· what they named is not on record: HTTP 404
    │   ├── PluginError ······················· an integration refused as it loads (plugins.py)
    │   └── SettingTyped ······················ a setting that cannot be read (env_values.py)
    ├── EmbeddingFailed ······················· no vectors; nothing written
    │   └── IngestStopped ····················· a batch not embedded; earlier batches stored (ingest/ingest.py)
    ├── ContractMismatch ······················ the collection was built with another model
    ├── StoreUnavailable ······················ exit 1, HTTP 503
    │   ├── NothingStored ····················· nothing ingested here yet
    │   └── StoreDamaged ······················ the store's files cannot be read
    ├── SourceFailed ·························· a backlog that cannot be read at all; nothing written
    ├── DiskFull ······························ no room for what was about to be written
    ├── DeliveryError ························· one delivery attempt failed (a target's; retried by the outbox)
    ├── ServiceUnreachable ···················· the running service did not answer: the CLI looks up itself
    ├── ServiceFailed ························· the running service refused what the CLI asked (cli/service_memory.py)
    ├── ServeFailed ··························· the service cannot listen where asked (cli/run.py)
    └── LoginRequired ························· the page wants a login first: a redirect (service/page_login.py)

tests/test_layout.py holds every exception class of the package to this tree (one private `ValueError`
stands outside, for pydantic's validators: `service/body._Refused`).
"""


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


class DeliveryError(OncallMemoryError):
    """An attempt that did not deliver. `retry`: trying later may work; `wait`: how long the target asked
    for; `ambiguous`: the message may have arrived all the same. Raised by a target's `send`; the outbox
    retries (`targets.check` and `transport_failure` make the right one)."""

    def __init__(self, error: str, *, retry: bool, wait: float | None = None, ambiguous: bool = False):
        super().__init__(error)
        self.retry, self.wait, self.ambiguous = retry, wait, ambiguous


class ServiceUnreachable(OncallMemoryError):
    """The running service did not answer (refused, timed out, reset): the caller looks up by itself."""


class DiskFull(OncallMemoryError):
    """The disk under the data dir has no room for what was about to be written. Nothing was written."""


class PluginError(InvalidInput):
    """An installed integration could not be loaded, or offers a hook the contract does not have (a misspelt
    name, arguments the spec lacks): one line naming it and what to fix. The other integrations load."""
