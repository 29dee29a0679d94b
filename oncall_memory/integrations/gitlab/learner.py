"""The memory learns a GitLab incident as it is closed: the webhook says so (`webhook.py`), and this target
reads the issue and its notes back through the API and ingests them with the source's own mapping
(`learning.ReadBackLearner` does the rest). An issue the source would not read (another type, without the
labels asked for) is not remembered."""

from __future__ import annotations

from typing import Any

from ...answer.render import Answer
from ...domain.incident import Incident
from ...jobs import Job
from ...learning import ReadBackLearner
from ...memory import Memory
from .backlog import GitLabAPI, api_from, asked_labels, project_path, read_issue, wanted


class GitLabLearner(ReadBackLearner):
    name = "memory-gitlab"
    learns = "closed GitLab issues, by /webhooks/gitlab"
    what = "GitLab issue"

    def __init__(self, api: GitLabAPI, memory: Memory, *, issue_type: str = "incident", labels: str = ""):
        super().__init__(api, memory)
        self._issue_type = issue_type.strip()
        self._labels = asked_labels(labels)

    @classmethod
    def from_settings(cls, settings: Any, memory: Memory) -> GitLabLearner:
        return cls(api_from(settings), memory, issue_type=settings.gitlab.issue_type, labels=settings.gitlab.labels)

    def accepts(self, job: Job) -> bool:
        return job.kind == "learn" and job.record_of("gitlab") is not None

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        return {"issue": job.record_of("gitlab")}

    def record(self, job: Job) -> str:
        return job.record_of("gitlab") or ""

    def read(self, key: str) -> Incident | None:
        project, _, iid = key.partition("#")
        base = project_path(project)
        issue = self._api.get(f"{base}/issues/{int(iid)}").json()
        if not isinstance(issue, dict) or issue.get("state") != "closed":
            return None  # reopened since
        if not wanted(issue, self._issue_type, self._labels):
            return None  # not an incident as this memory reads them
        return read_issue(self._api, base, issue, project, self._labels)  # a ValidationError: `send` says why
