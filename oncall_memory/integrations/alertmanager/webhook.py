"""Alertmanager's webhook (version 4) in: the payload as it really arrives, and the one job a group's firing
alerts become. Each alert is read by the core's rule for alerts of this shape (`rule_alerts`). The route is
`AlertmanagerHook`, offered through the `webhook` hook an installed pager uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from ...credentials import bearer, same_secret
from ...domain.rule_alerts import RuleAlert, alert_key, group_key, group_key_of, has_text, rule_alert, rule_alert_item
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


# A group of more firing alerts than this is claimed by its alerts' keys and read after its claim, on the
# worker's thread (`read_alerts`). Read one by one before the claim, a storm's 10,000 alerts were 0.6 s of
# its 202 (about 60 µs an alert: the annotations' texts, the labels' facts, the models); a group this size
# is read at once in a few milliseconds.
READ_AT_ONCE = 100


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
        return _unread_job(hook, posted)
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


def _unread_job(hook: AlertmanagerWebhook, posted: list[Any]) -> tuple[list[Job], int]:
    """`alertmanager_jobs`, its firing alerts claimed by their keys and kept as they were posted. An alert with
    no text is counted as ignored now, by the test reading it would make (`has_text`)."""
    unread: dict[str, dict[str, Any]] = {}
    keys, ignored = [], 0
    for a, as_posted in zip(hook.alerts, posted, strict=True):
        if a.status != "firing":
            continue
        if not has_text(a):
            ignored += 1
            continue
        key = alert_key(a, "alertmanager")
        keys.append(key)
        unread.setdefault(key, as_posted)  # twice in one post: the first is the one claimed, as when read at once
    if not unread:
        return [], ignored
    key = group_key_of("alertmanager", hook.groupKey, keys)
    return [Job(key=key, items=[], unread=unread, group=hook.groupLabels.get("alertname"))], ignored


def read_alerts(job: Job, label_facts: Mapping[str, list[str]] | None, known: Mapping[str, Iterable[str]]) -> Job:
    """The job with its unread alerts read into items, as `alertmanager_jobs` reads a small group's."""
    items = list(job.items)
    for as_posted in job.unread.values():
        a = RuleAlert.model_validate(as_posted)
        item = rule_alert_item(a, "alertmanager", label_facts, known, web_link(a.annotations.get("runbook_url")))
        if item is not None:
            items.append(item)
    return job.model_copy(update={"items": items, "unread": {}})


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
