"""The memory learns a resolved Jira issue the moment a webhook says so: the issue and all its comments are
read back through the API (the webhook carries only part of them) and ingested with the same mapping as
the jira source. Through the outbox, so retried while Jira is down, and through `Memory.ingest`, so with
the same redaction and poison rules as any ingest."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from ...answer.render import Answer
from ...errors import OncallMemoryError, SourceFailed
from ...jobs import Job
from ...memory import Memory
from ...targets import DeliveryError, Target
from .source import JiraAPI, all_comments, to_incident

log = logging.getLogger(__name__)


class JiraLearner(Target):
    name = "memory-jira"

    def __init__(self, api: JiraAPI, memory: Memory):
        self._api = api
        self._memory = memory

    def accepts(self, job: Job) -> bool:
        return job.kind == "learn" and job.jira_issue is not None

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        return {"issue": job.jira_issue}

    def send(self, job: Job, body: dict[str, Any]) -> None:
        key = job.jira_issue or ""
        try:
            issue = self._api.issue(key)
            comments = all_comments(self._api, issue)
        except SourceFailed as exc:  # Jira down: the outbox tries again; refusing (404, 403): it fails now
            raise DeliveryError(f"reading Jira issue {key}: {exc}", retry=not exc.permanent) from exc
        if not (issue.get("fields") or {}).get("resolution"):
            return  # reopened since, or never resolved: remembered when it is
        try:
            incident = to_incident(issue, comments, self._api.base_url)
        except ValidationError as exc:
            raise DeliveryError(
                f"Jira issue {key} cannot be remembered: {exc.errors()[0]['msg']}", retry=False
            ) from exc
        try:
            report = self._memory.ingest([incident])
        except OncallMemoryError as exc:
            raise DeliveryError(f"learning {key}: {exc}", retry=True) from exc
        log.info("learnt Jira issue %s: %s", key, report.counts())

    def close(self) -> None:
        self._api.close()
