"""The answer as a note on the PagerDuty incident the alert opened: exactly once, by the marker each note
carries (read back after an ambiguous attempt, see `targets`)."""

from __future__ import annotations

from typing import Any

import httpx

from ...answer.render import Answer, job_note
from ...jobs import Job
from ...targets import DeliveryError, Target, check, marker, transport_failure
from .api import PagerDutyAPI

NOTE_LIMIT = 25_000  # characters PagerDuty takes in a note


class PagerDutyNotes(Target):
    name = "pagerduty-note"

    def __init__(self, api: PagerDutyAPI, *, sender: str | None = None):
        self._api = api
        self._sender = sender  # the From: address, for the startup's log

    def describe(self) -> str:
        return f"PagerDuty notes on PagerDuty incidents (from {self._sender})"

    def accepts(self, job: Job) -> bool:
        return job.kind == "lookup" and job.record_of("pagerduty") is not None

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        mark = f"\n\n({marker(job)})"
        return {"note": {"content": job_note(job.title, answers, limit=NOTE_LIMIT - len(mark)) + mark}}

    def send(self, job: Job, body: dict[str, Any]) -> None:
        incident = job.record_of("pagerduty") or ""
        what = f"PagerDuty note on {incident}"
        try:
            response = self._api.post_note(incident, body["note"]["content"])
        except httpx.TransportError as exc:
            raise transport_failure(exc, what) from exc
        check(response, what, wait_cap=self._api.max_wait)

    def already_delivered(self, job: Job) -> bool:
        """Is a note with this job's marker on the incident? Read back after an ambiguous attempt."""
        mark, incident = marker(job), job.record_of("pagerduty") or ""
        try:
            notes = self._api.notes(incident)
        except Exception as exc:  # SourceFailed after its own retries: try the whole delivery again later
            raise DeliveryError(f"reading back the notes of {incident}: {exc}", retry=True, ambiguous=True) from exc
        return any(mark in (n.get("content") or "") for n in notes)

    def close(self) -> None:
        self._api.close()
