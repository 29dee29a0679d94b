"""Alertmanager's webhook (version 4) in: the payload as it really arrives, and the one job a group's firing
alerts become. Each alert is read by the core's rule for alerts of this shape (`rule_alerts`). The route is
`AlertmanagerHook`, offered through the `webhook` hook an installed pager uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from ...credentials import bearer, same_secret
from ...jobs import Item, Job
from ...links import web_link
from ...settings import Settings
from ...webhook import Webhook
from .. import Loose
from ..rule_alerts import READ_AT_ONCE, RuleAlert, group_key, read_unread, rule_alert, rule_alert_item, unread_job

AMAlert = RuleAlert  # the name tests and plugins know
alertmanager_alert = rule_alert
__all__ = [
    "READ_AT_ONCE",
    "AMAlert",
    "AlertmanagerHook",
    "AlertmanagerWebhook",
    "alertmanager_alert",
    "alertmanager_jobs",
    "read_alerts",
]


class AlertmanagerWebhook(Loose):
    version: str | None = None
    status: str | None = None
    groupKey: str | None = None
    groupLabels: dict[str, str] = {}
    alerts: list[RuleAlert]


def alertmanager_jobs(
    hook: AlertmanagerWebhook,
    label_facts: Mapping[str, list[str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
    *,
    posted: list[Any] | None = None,
) -> tuple[list[Job], int]:
    """The group as one job holding its firing alerts (one message per group and target), and how many
    firing alerts had no text to look up. Resolved alerts need no lookup. `posted`: the body's own `alerts`
    (redacted), which `hook` was read from; given, a group of more than READ_AT_ONCE firing alerts keeps
    them unread (`Job.unread`) for `read_alerts`."""
    if posted is not None and sum(a.status == "firing" for a in hook.alerts) > READ_AT_ONCE:
        return unread_job("alertmanager", hook.alerts, posted, hook.groupKey, hook.groupLabels.get("alertname"))
    items, ignored = [], 0
    for a in hook.alerts:
        if a.status != "firing":
            continue
        item = _item(a, label_facts, known)
        if item is None:
            ignored += 1
            continue
        items.append(item)
    if not items:
        return [], ignored
    key = group_key("alertmanager", hook.groupKey, items)
    return [Job(key=key, items=items, group=hook.groupLabels.get("alertname"))], ignored


def read_alerts(job: Job, label_facts: Mapping[str, list[str]] | None, known: Mapping[str, Iterable[str]]) -> Job:
    """The job with its unread alerts read into items, as `alertmanager_jobs` reads a small group's."""
    return read_unread(job, lambda a: _item(RuleAlert.model_validate(a), label_facts, known))


def _item(
    a: RuleAlert, label_facts: Mapping[str, list[str]] | None, known: Mapping[str, Iterable[str]] | None
) -> Item | None:
    return rule_alert_item(a, "alertmanager", label_facts, known, web_link(a.annotations.get("runbook_url")))


class AlertmanagerHook(Webhook):
    """`POST /webhooks/alertmanager`, mounted through the `webhook` hook as an installed pager's is. Its secret
    (ONCALL_MEMORY_ALERTMANAGER_TOKEN) is the bearer token of Alertmanager's `http_config.authorization`,
    checked before the body is read."""

    name: ClassVar[str] = "alertmanager"
    variable: ClassVar[str] = "ONCALL_MEMORY_ALERTMANAGER_TOKEN"
    setting = "alertmanager.token"  # its own settings group (`config.py`)
    body: ClassVar[type[BaseModel] | None] = AlertmanagerWebhook
    credential: ClassVar[str | None] = "bearer token"

    def carries(self, secret: str, headers: Mapping[str, str]) -> bool | None:
        return same_secret(bearer(headers), secret)

    def jobs(self, body: Any, settings: Settings, known: Mapping[str, Any]) -> tuple[list[Job], int | str]:
        posted = body.get("alerts") if isinstance(body, dict) else None
        group = AlertmanagerWebhook.model_validate(body)
        return alertmanager_jobs(group, settings.service.label_facts, known, posted=posted)

    def read(self, job: Job, settings: Settings, known: Mapping[str, Any]) -> Job:
        return read_alerts(job, settings.service.label_facts, known) if job.unread else job
