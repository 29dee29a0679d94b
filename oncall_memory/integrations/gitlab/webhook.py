"""GitLab's issue webhooks in, so the memory learns an incident as it is closed (as it does from PagerDuty,
Jira and incident.io). A project or group webhook with "Issues events" (and "Confidential issues events")
sends its secret token in `X-Gitlab-Token`, compared in constant time. An issue event whose issue is closed
(`object_attributes.action` "close", or "update" of a closed issue: an edit after the fact is learnt again)
becomes a job to read the issue back and remember it; anything else is acknowledged and ignored.
"""

from __future__ import annotations

from pydantic import Field

from ...jobs import Job
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
    return Job.learn(key, "issue closed", gitlab_issue=record)
