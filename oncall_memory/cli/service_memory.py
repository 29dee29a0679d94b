"""The memory a running service owns, used through it: while `serve` holds the embedded store nothing else
can open it, so `ingest` and `verify` post to the service (`service/commands.py`) and report as
they would standalone. `ServiceMemory` has the part of `Memory` an ingest job uses: `ingest` (the backlog
in batches, each redacted again where it enters the service), `index_due` and `build_index` (the service's
own indexer builds when due), `location`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..domain.rejected import Rejected
from ..errors import OncallMemoryError, ServiceUnreachable
from ..ingest.ingest import COUNTS, Embed, IngestReport, IngestStopped
from ..store.backup import Verification
from . import remote

if TYPE_CHECKING:
    from ..domain.incident import Incident
    from ..settings import Settings

BATCH = 200  # incidents a post ...
BATCH_BYTES = 256 * 1024  # ... and bytes, well under the service's body limit


class ServiceFailed(OncallMemoryError):
    """The service refused or could not do what was asked; the message is its own."""


class ServiceMemory:
    def __init__(self, settings: Settings, url: remote.Service):
        self._settings = settings
        self.url = url

    @property
    def location(self) -> str:
        return f"the service at {self.url}"

    def index_due(self) -> bool:
        return False  # the service's indexer builds the index when due

    def build_index(self) -> None:
        return None

    def ingest(
        self,
        items: Iterable[Incident | Rejected],
        *,
        embed: Embed | None = None,
        on_batch: Callable[[int, int], None] | None = None,
    ) -> IngestReport:
        """Post the backlog in batches; a batch the service could not store stops the rest (`IngestStopped`,
        with what the batches before it stored)."""
        report = IngestReport()
        incidents = []
        for item in items:
            if isinstance(item, Rejected):
                report.rejected += 1
                report.rejections.append(item)
            else:
                incidents.append(item)
        report.fetched = len(incidents) + report.rejected
        done = 0
        for batch in _batches([i.model_dump(mode="json", exclude_none=True) for i in incidents]):
            try:
                answer = remote.post(self.url, "/ingest", {"incidents": batch})
            except ServiceUnreachable as exc:
                raise IngestStopped(f"the service at {self.url} did not answer ({exc})", report) from exc
            if answer.status_code == 503:
                raise IngestStopped(f"the service could not store a batch: {remote.detail(answer)}", report)
            got = self._json(answer)
            stored = {key: int(got.get(key, 0)) for key in COUNTS if key != "fetched"}  # fetched: counted here
            rejections = [Rejected(r["where"], r["reason"]) for r in got.get("rejections", [])]
            report.add(IngestReport(**stored, rejections=rejections))
            done += len(batch)
            if on_batch:
                on_batch(done, len(incidents))
        return report

    def verify(self, source: Iterable[Incident] | None = None) -> Verification:
        """The service's `Memory.verify`, against the backlog's (source, id) pairs when given."""
        body = {"source": None if source is None else [[i.source, i.id] for i in source]}
        try:
            return Verification(**self._json(remote.post(self.url, "/verify", body)))
        except ServiceUnreachable as exc:
            raise ServiceFailed(f"the service at {self.url} did not answer ({exc}): is it still running?") from exc

    def _json(self, answer: remote.Response) -> dict[str, Any]:
        if answer.status_code >= 400:
            raise ServiceFailed(f"the service at {self.url} answered {answer.status_code}: {remote.detail(answer)}")
        data = answer.json()
        if not isinstance(data, dict):
            raise ServiceFailed(f"the service at {self.url} answered {answer.text[:200]!r}")
        return data

    def __enter__(self) -> ServiceMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _batches(rows: list[dict[str, Any]]) -> Iterable[list[dict[str, Any]]]:
    """Rows in batches of at most BATCH rows and about BATCH_BYTES of JSON (one row alone may be more)."""
    batch: list[dict[str, Any]] = []
    size = 0
    for row in rows:
        length = len(json.dumps(row))
        if batch and (len(batch) >= BATCH or size + length > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(row)
        size += length
    if batch:
        yield batch
