"""Jira's webhooks in, so the memory learns as an issue is resolved (as it does from PagerDuty): an admin
webhook (System > WebHooks) with a secret signs each body, `X-Hub-Signature: sha256=<hex HMAC-SHA256 of
the raw body>`. An issue event (`jira:issue_updated`, `jira:issue_created`) or a comment event
(`comment_created`, `comment_updated`) about an issue that has a resolution becomes a job to read the
issue and remember it; anything else is acknowledged and ignored.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ...credentials import same_secret
from ...jobs import Job
from ...settings import Settings
from ...webhook import Webhook
from .. import Loose

LEARN_EVENTS = ("jira:issue_created", "jira:issue_updated", "comment_created", "comment_updated")
ISSUE_KEY = r"^[A-Z][A-Z0-9_]{0,49}-[0-9]{1,12}$"  # PROJECT-123: it goes into a REST path


class JiraIssueRef(Loose):
    key: str = Field(pattern=ISSUE_KEY)
    fields: dict[str, Any] = {}


class JiraWebhook(Loose):
    webhookEvent: str
    timestamp: int | None = None
    issue: JiraIssueRef | None = None
    changelog: dict[str, Any] | None = None


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """WebSub's `sha256=<hex>`, as Jira sends it in `X-Hub-Signature`."""
    if not header:
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return same_secret(header.strip(), expected)


def resolved(hook: JiraWebhook) -> bool:
    """Does the event say the issue has a resolution (set now, by its changelog, or already)?"""
    if hook.issue is None:
        return False
    if hook.issue.fields.get("resolution"):
        return True
    items = (hook.changelog or {}).get("items")
    return any(
        isinstance(i, dict) and i.get("field") == "resolution" and i.get("to") not in (None, "")
        for i in (items if isinstance(items, list) else [])
    )


def learn_job(hook: JiraWebhook, delivery: str | None) -> Job:
    """Read the issue and remember it. Keyed by Jira's delivery id (`X-Atlassian-Webhook-Identifier`) or the
    event's time: each delivery once, a later edit learnt again."""
    assert hook.issue is not None
    key = f"jira-learn:{hook.issue.key}:{delivery or hook.timestamp or hook.webhookEvent}"
    return Job.learn(key, hook.webhookEvent, hook.issue.key)


def learns(settings: Settings) -> bool:
    """Jira issues are learnt as they resolve with a webhook secret and the API to read them back."""
    jira = settings.jira
    return bool(jira.webhook_secret and jira.url and jira.email and jira.token)


class JiraHook(Webhook):
    """`POST /webhooks/jira`, mounted through the `webhook` hook: an admin webhook whose resolved issues are
    read back and remembered (learning); nothing is posted. Off until it can learn."""

    name: ClassVar[str] = "jira"
    variable: ClassVar[str] = "ONCALL_MEMORY_JIRA_WEBHOOK_SECRET"
    setting = "jira.webhook_secret"  # its own settings group (`config.py`)
    body: ClassVar[type[BaseModel] | None] = JiraWebhook
    credential: ClassVar[str | None] = "X-Hub-Signature"
    challenge: ClassVar[str | None] = None
    guard: ClassVar[str | None] = "signed (X-Hub-Signature), learning"

    def off(self, settings: Settings) -> str | None:
        if learns(settings):
            return None
        return (
            "learning from Jira is off: set ONCALL_MEMORY_JIRA_WEBHOOK_SECRET (the webhook's secret) and "
            "ONCALL_MEMORY_JIRA_URL, _EMAIL and _TOKEN (to read the issue back)"
        )

    def authentic(self, secret: str, headers: Mapping[str, str], raw: bytes) -> bool:
        return verify_signature(secret, raw, headers.get("x-hub-signature"))

    def jobs(self, body: Any, settings: Settings, known: Mapping[str, Any]) -> tuple[list[Job], int | str]:
        return self.jobs_from(body, settings, known, {})

    def jobs_from(
        self, body: Any, settings: Settings, known: Mapping[str, Any], headers: Mapping[str, str]
    ) -> tuple[list[Job], int | str]:
        hook = JiraWebhook.model_validate(body)
        if hook.webhookEvent not in LEARN_EVENTS or not resolved(hook):
            return [], hook.webhookEvent
        delivery = headers.get("x-atlassian-webhook-identifier")
        return [learn_job(hook, delivery[:100] if delivery else None)], 0
