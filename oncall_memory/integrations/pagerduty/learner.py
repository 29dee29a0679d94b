"""The memory learns as incidents close: a PagerDuty `incident.resolved` or `incident.annotated` webhook
becomes a delivery to this target, which reads the incident, its notes and its oldest alert (the same
mapping as the PagerDuty source) and ingests it at once through the service's memory, and records the
responders' feedback lines it finds in the notes. Through the outbox, so exactly once and retried while
PagerDuty is down, and through `Memory.ingest`, so with the same redaction and poison rules as any ingest.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from ...answer.render import Answer
from ...errors import OncallMemoryError, SourceFailed
from ...jobs import Job
from ...memory import Memory
from ...targets import DeliveryError, Target
from .api import PagerDutyAPI
from .backlog import to_incident, verdicts
from .webhook import rest_incident_alert

log = logging.getLogger(__name__)


class Learner(Target):
    name = "memory"
    learns = "resolved and annotated PagerDuty incidents"

    def __init__(self, api: PagerDutyAPI, memory: Memory):
        self._api = api
        self._memory = memory

    def accepts(self, job: Job) -> bool:
        return job.kind == "learn" and job.record_of("pagerduty") is not None

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        return {"incident": job.record_of("pagerduty")}

    def send(self, job: Job, body: dict[str, Any]) -> None:
        incident_id = job.record_of("pagerduty") or ""
        try:
            raw = self._api.incident(incident_id)
            notes = self._api.notes(incident_id)
            oldest = self._api.oldest_alert(incident_id) if raw.get("status") == "resolved" else None
        except SourceFailed as exc:  # PagerDuty down: the outbox tries again; refusing (404): it fails now
            raise DeliveryError(f"reading PagerDuty incident {incident_id}: {exc}", retry=not exc.permanent) from exc
        except OncallMemoryError as exc:
            raise DeliveryError(f"reading PagerDuty incident {incident_id}: {exc}", retry=True) from exc
        alert = rest_incident_alert({"id": incident_id, **raw})
        for v in verdicts(notes):
            self._memory.record_feedback(
                alert,
                v.suggested,
                v.verdict,
                who=v.who,
                at=datetime.fromisoformat(v.at) if v.at else None,
                ref=f"pagerduty-note:{v.note}",
            )
        if raw.get("status") != "resolved":
            return  # the incident is remembered when it resolves; its feedback counts already
        try:
            report = self._memory.ingest([to_incident(raw, notes, oldest)])
        except OncallMemoryError as exc:
            raise DeliveryError(f"learning {incident_id}: {exc}", retry=True) from exc
        log.info("learnt PagerDuty incident %s: %s", incident_id, report.counts())

    def close(self) -> None:
        self._api.close()
