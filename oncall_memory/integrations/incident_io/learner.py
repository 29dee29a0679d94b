"""The memory learns an incident.io incident as it closes: a webhook says so (`webhook.py`), and this target
reads the incident and its updates back through the API (a webhook's body is not the whole story) and
ingests them with the source's own mapping. Through the outbox, so retried while incident.io is down, and
through `Memory.ingest`, so with the same redaction and poison rules as any ingest."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from ...answer.render import Answer
from ...errors import OncallMemoryError, SourceFailed
from ...jobs import Job
from ...memory import Memory
from ...targets import DeliveryError, Target
from .source import IncidentIoAPI, to_incident

log = logging.getLogger(__name__)


class IncidentIoLearner(Target):
    name = "memory-incident_io"

    def __init__(self, api: IncidentIoAPI, memory: Memory):
        self._api = api
        self._memory = memory

    def accepts(self, job: Job) -> bool:
        return job.kind == "learn" and job.incident_io_incident is not None

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        return {"incident": job.incident_io_incident}

    def send(self, job: Job, body: dict[str, Any]) -> None:
        incident_id = job.incident_io_incident or ""
        try:
            raw = self._api.incident(incident_id)
            updates = list(self._api.listing("/v2/incident_updates", "incident_updates", {"incident_id": incident_id}))
        except SourceFailed as exc:  # down: the outbox tries again; refusing (404, 403): it fails now
            raise DeliveryError(f"reading incident.io incident {incident_id}: {exc}", retry=not exc.permanent) from exc
        if (raw.get("incident_status") or {}).get("category") != "closed":
            return  # reopened since, or not closed after all: remembered when it closes
        try:
            incident = to_incident(raw, updates)
        except ValidationError as exc:
            raise DeliveryError(
                f"incident.io incident {incident_id} cannot be remembered: {exc.errors()[0]['msg']}", retry=False
            ) from exc
        try:
            report = self._memory.ingest([incident])
        except OncallMemoryError as exc:
            raise DeliveryError(f"learning {incident_id}: {exc}", retry=True) from exc
        log.info("learnt incident.io incident %s: %s", incident.id, report.counts())

    def close(self) -> None:
        self._api.close()
