"""GitLab's issue webhooks in, so the memory learns an incident as it is closed (as it does from PagerDuty,
Jira and incident.io). A project or group webhook with "Issues events" (and "Confidential issues events")
sends its secret token in `X-Gitlab-Token`, compared in constant time. An issue event whose issue is closed
(`object_attributes.action` "close", or "update" of a closed issue: an edit after the fact is learnt again)
becomes a job to read the issue back and remember it; anything else is acknowledged and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ...credentials import same_secret
from ...jobs import Job
from ...settings import Settings
from ...webhook import Webhook
from .. import Loose

ISSUE_KINDS = ("issue",)  # object_kind; confidential issues come as event_type "confidential_issue", same kind
LEARN_ACTIONS = ("close", "update")


class GitLabProjectRef(Loose):
    id: int = Field(ge=1, le=2**53)


class GitLabIssueAttributes(Loose):
    iid: int = Field(ge=1, le=2**53)
    state: str | None = None
    action: str | None = None
    updated_at: str | None = Field(default=None, max_length=64)


class GitLabIssueHook(Loose):
    object_kind: str
    project: GitLabProjectRef | None = None
    object_attributes: GitLabIssueAttributes | None = None


def closed(hook: GitLabIssueHook) -> bool:
    """Does the event say an issue is closed now (closed, or edited while closed)?"""
    attributes = hook.object_attributes
    return (
        hook.object_kind in ISSUE_KINDS
        and hook.project is not None
        and attributes is not None
        and attributes.state == "closed"
        and attributes.action in LEARN_ACTIONS
    )


def learn_job(hook: GitLabIssueHook, delivery: str | None) -> Job:
    """Read the issue and remember it. Keyed by GitLab's event UUID (`X-Gitlab-Event-UUID`) or the issue's
    update time: each delivery once, a later edit learnt again."""
    assert hook.project is not None and hook.object_attributes is not None
    record = f"{hook.project.id}#{hook.object_attributes.iid}"
    key = f"gitlab-learn:{record}:{delivery or hook.object_attributes.updated_at or hook.object_attributes.action}"
    return Job.learn(key, "issue closed", record)


def learns(settings: Settings) -> bool:
    """GitLab issues are learnt as they close with the webhook's secret token and the API to read them back."""
    return bool(settings.gitlab.webhook_secret and settings.gitlab.token)


class GitLabHook(Webhook):
    """`POST /webhooks/gitlab`, mounted through the `webhook` hook: a project or group webhook (Issues
    events) whose closed issues are read back and remembered. Its secret token comes in `X-Gitlab-Token`,
    checked before the body is read. Off until it can learn."""

    name: ClassVar[str] = "gitlab"
    variable: ClassVar[str] = "ONCALL_MEMORY_GITLAB_WEBHOOK_SECRET"
    setting = "gitlab.webhook_secret"  # its own settings group (`config.py`)
    body: ClassVar[type[BaseModel] | None] = GitLabIssueHook
    credential: ClassVar[str | None] = "X-Gitlab-Token"
    challenge: ClassVar[str | None] = None
    guard: ClassVar[str | None] = "its secret token (X-Gitlab-Token), learning"

    def off(self, settings: Settings) -> str | None:
        if learns(settings):
            return None
        return (
            "learning from GitLab is off: set ONCALL_MEMORY_GITLAB_WEBHOOK_SECRET (the webhook's secret token) and "
            "ONCALL_MEMORY_GITLAB_TOKEN (to read the issue back)"
        )

    def carries(self, secret: str, headers: Mapping[str, str]) -> bool | None:
        return same_secret(headers.get("x-gitlab-token", ""), secret)

    def jobs(self, body: Any, settings: Settings, known: Mapping[str, Any]) -> tuple[list[Job], int | str]:
        return self.jobs_from(body, settings, known, {})

    def jobs_from(
        self, body: Any, settings: Settings, known: Mapping[str, Any], headers: Mapping[str, str]
    ) -> tuple[list[Job], int | str]:
        hook = GitLabIssueHook.model_validate(body)
        if not closed(hook):
            action = hook.object_attributes.action if hook.object_attributes else None
            return [], f"{hook.object_kind[:50]}:{str(action)[:50]}"
        delivery = headers.get("x-gitlab-event-uuid")
        return [learn_job(hook, delivery[:100] if delivery else None)], 0
