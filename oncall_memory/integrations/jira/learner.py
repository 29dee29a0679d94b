"""The memory learns a resolved Jira issue the moment a webhook says so: the issue and all its comments are
read back through the API (the webhook carries only part of them) and ingested with the same mapping as
the jira source (`learning.ReadBackLearner` does the rest)."""

from __future__ import annotations

from typing import Any

from ...answer.render import Answer
from ...domain.incident import Incident
from ...jobs import Job
from ...learning import ReadBackLearner
from .backlog import all_comments, to_incident


class JiraLearner(ReadBackLearner):
    name = "memory-jira"
    learns = "resolved Jira issues, by /webhooks/jira"
    what = "Jira issue"

    def accepts(self, job: Job) -> bool:
        return job.kind == "learn" and job.record_of("jira") is not None

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        return {"issue": job.record_of("jira")}

    def record(self, job: Job) -> str:
        return job.record_of("jira") or ""

    def read(self, key: str) -> Incident | None:
        issue = self._api.issue(key)
        comments = all_comments(self._api, issue)
        if not (issue.get("fields") or {}).get("resolution"):
            return None  # reopened since, or never resolved
        return to_incident(issue, comments, self._api.base_url)
