"""The memory learns an incident.io incident as it closes: a webhook says so (`webhook.py`), and this target
reads the incident and its updates back through the API and ingests them with the source's own mapping
(`learning.ReadBackLearner` does the rest)."""

from __future__ import annotations

from typing import Any

from ...answer.render import Answer
from ...domain.incident import Incident
from ...jobs import Job
from ...learning import ReadBackLearner
from .backlog import to_incident


class IncidentIoLearner(ReadBackLearner):
    name = "memory-incident_io"
    learns = "closed incident.io incidents, by /webhooks/incident_io"
    what = "incident.io incident"

    def accepts(self, job: Job) -> bool:
        return job.kind == "learn" and job.record_of("incident_io") is not None

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        return {"incident": job.record_of("incident_io")}

    def record(self, job: Job) -> str:
        return job.record_of("incident_io") or ""

    def read(self, key: str) -> Incident | None:
        raw = self._api.incident(key)
        updates = list(self._api.listing("/v2/incident_updates", "incident_updates", {"incident_id": key}))
        if (raw.get("incident_status") or {}).get("category") != "closed":
            return None  # reopened since, or not closed after all
        return to_incident(raw, updates)
