"""Alertmanager's webhook (version 4) in: the payload as it really arrives, and the one job a group's firing
alerts become. Each alert is read by the core's rule for alerts of this shape (`rule_alerts`). The route is
`AlertmanagerHook`, offered through the `webhook` hook an installed pager uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from ...credentials import bearer, same_secret
from ...domain.rule_alerts import RuleAlert, group_key, rule_alert, rule_alert_item
from ...jobs import Job
from ...links import web_link
from ...settings import Settings
from ...webhook import Webhook
from .. import Loose

AMAlert = RuleAlert  # the name tests and plugins know
alertmanager_alert = rule_alert


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
) -> tuple[list[Job], int]:
    """The group as one job holding its firing alerts (one message per group and target), and how many
    firing alerts had no text to look up. Resolved alerts need no lookup."""
    items, ignored = [], 0
    for a in hook.alerts:
        if a.status != "firing":
            continue
        item = rule_alert_item(a, "alertmanager", label_facts, known, web_link(a.annotations.get("runbook_url")))
        if item is None:
            ignored += 1
            continue
        items.append(item)
    if not items:
        return [], ignored
    key = group_key("alertmanager", hook.groupKey, items)
    return [Job(key=key, items=items, group=hook.groupLabels.get("alertname"))], ignored


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
        return alertmanager_jobs(AlertmanagerWebhook.model_validate(body), settings.service.label_facts, known)
