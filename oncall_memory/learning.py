"""What the trackers' learners share (Jira, incident.io, GitLab): a webhook said a record closed, and the learner
reads it back through the vendor's API (a webhook's body is not the whole story) and remembers it. Through
the outbox, so retried while the vendor is down, and through `Memory.ingest`, so with the same redaction
and poison rules as any ingest. (PagerDuty's learner also records the feedback in an incident's notes, so
it keeps its own `send`.)
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from typing import Any, ClassVar

from pydantic import ValidationError

from .domain.incident import Incident
from .errors import OncallMemoryError, SourceFailed
from .jobs import Job
from .memory import Memory
from .targets import DeliveryError, Target

log = logging.getLogger(__name__)


class ReadBackLearner(Target):
    what: ClassVar[str]  # how a record is named in messages: "Jira issue", "incident.io incident"

    def __init__(self, api: Any, memory: Memory):
        self._api = api
        self._memory = memory

    @abstractmethod
    def record(self, job: Job) -> str:
        """The record the job is about (an issue key, an incident id)."""

    @abstractmethod
    def read(self, key: str) -> Incident | None:
        """The record as an incident, read back; None when it is not closed after all (reopened since):
        it is remembered when it closes. Raises `SourceFailed` (the vendor) or `ValidationError`."""

    def send(self, job: Job, body: dict[str, Any]) -> None:
        key = self.record(job)
        try:
            incident = self.read(key)
        except SourceFailed as exc:  # down: the outbox tries again; refusing (404, 403): it fails now
            raise DeliveryError(f"reading {self.what} {key}: {exc}", retry=not exc.permanent) from exc
        except ValidationError as exc:
            raise DeliveryError(
                f"{self.what} {key} cannot be remembered: {exc.errors()[0]['msg']}", retry=False
            ) from exc
        if incident is None:
            return
        try:
            report = self._memory.ingest([incident])
        except OncallMemoryError as exc:
            raise DeliveryError(f"learning {key}: {exc}", retry=True) from exc
        log.info("learnt %s %s: %s", self.what, key, report.counts())

    def close(self) -> None:
        self._api.close()
