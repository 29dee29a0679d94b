"""Grafana Alerting's webhook contact point in: the body as Grafana sends it (Alertmanager-shaped: each
alert's labels and annotations, plus `title`, `message`, `state`, `orgId` and each alert's `valueString`,
`silenceURL`, `dashboardURL`, `panelURL`), checked by its Authorization header or its HMAC signature, and
the one job a group's firing alerts become.

Written through the `webhook.Webhook` port only: the service mounts it as it mounts an installed plugin's.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from ...credentials import bearer, same_secret
from ...domain.annotations import texts
from ...jobs import Item, Job
from ...settings import Settings
from ...webhook import Webhook
from .. import Loose
from ..rule_alerts import READ_AT_ONCE, RuleAlert, group_key, read_unread, rule_alert, rule_item, unread_job

# Grafana's default signature header; the timestamp header has no default name in Grafana, so both names
# its documentation and its provisioning examples use are read.
SIGNATURE = "x-grafana-alerting-signature"
TIMESTAMPS = ("x-grafana-alerting-signature-timestamp", "x-grafana-alerting-timestamp")
REPLAY_WINDOW = 300.0  # seconds: a signed timestamp older (or newer) than this is refused


class GrafanaAlert(RuleAlert):
    valueString: str | None = None  # "[ var='B' labels={...} value=97.3 ]": the query's values, not words
    startsAt: str = ""
    fingerprint: str = ""


class GrafanaWebhook(Loose):
    """What is read of the body (`version`, `state`, `orgId` and the rest are kept, not read)."""

    groupKey: str | None = None
    groupLabels: dict[str, str] = {}
    title: str | None = None
    message: str | None = None
    alerts: list[GrafanaAlert]


def _signature_ok(secret: str, headers: Mapping[str, str], raw: bytes) -> bool:
    offered = headers.get(SIGNATURE, "").strip().lower()
    stamp = next((headers[h] for h in TIMESTAMPS if headers.get(h)), None)
    signed = raw
    if stamp is not None:
        try:
            if abs(time.time() - float(stamp)) > REPLAY_WINDOW:
                return False
        except ValueError:
            return False
        signed = stamp.encode("latin-1", "replace") + b":" + raw
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return same_secret(offered, expected)


def grafana_jobs(
    hook: GrafanaWebhook,
    label_facts: Mapping[str, list[str]] | None,
    known: Mapping[str, Any],
    *,
    posted: list[Any] | None = None,
) -> tuple[list[Job], int]:
    """The group as one job of its firing alerts, each read as Alertmanager's are (its name and every text
    its annotations carry). An alert with no text of its own, alone in its post, is read by the post's
    `title` and `message` (Grafana's default message lists labels and links; links are left out).
    `posted`: the body's own `alerts` (redacted); given, a group of more than READ_AT_ONCE firing alerts is
    claimed unread and read by `read_alerts`, as Alertmanager's is."""
    firing = [a for a in hook.alerts if a.status == "firing"]
    if posted is not None and len(firing) > READ_AT_ONCE:
        alerts = [_fingerprinted(a) for a in hook.alerts]
        return unread_job("grafana", alerts, posted, hook.groupKey, hook.groupLabels.get("alertname"))
    items, ignored = [], 0
    for a in firing:
        written = texts(a.annotations)  # read once, for the alert and its item
        alert = rule_alert(a, label_facts, known, written=written)
        if alert is not None and len(firing) == 1 and not written:
            group = " - ".join(texts({"title": hook.title or "", "message": hook.message or ""}, skip=[alert.text]))
            alert = alert.model_copy(update={"text": " - ".join(p for p in (alert.text, group) if p)})
        if alert is None:
            ignored += 1
            continue
        items.append(rule_item(_fingerprinted(a), "grafana", alert, written=written))
    if not items:
        return [], ignored
    key = group_key("grafana", hook.groupKey, items)
    return [Job(key=key, items=items, group=hook.groupLabels.get("alertname"))], ignored


def _fingerprinted(a: GrafanaAlert) -> GrafanaAlert:
    if a.fingerprint:
        return a
    # Grafana always sends one; a hand-made post may not
    digest = hashlib.sha256(repr(sorted(a.labels.items())).encode()).hexdigest()[:16]
    return a.model_copy(update={"fingerprint": digest})


def read_alerts(job: Job, label_facts: Mapping[str, list[str]] | None, known: Mapping[str, Any]) -> Job:
    """The job with its unread alerts read into items, as `grafana_jobs` reads a group of more than one."""

    def item(as_posted: dict[str, Any]) -> Item | None:
        a = GrafanaAlert.model_validate(as_posted)
        written = texts(a.annotations)
        alert = rule_alert(a, label_facts, known, written=written)
        return None if alert is None else rule_item(_fingerprinted(a), "grafana", alert, written=written)

    return read_unread(job, item)


class GrafanaHook(Webhook):
    """`POST /webhooks/grafana`. Its secret (ONCALL_MEMORY_GRAFANA_SECRET) is sent by Grafana as the
    contact point's Authorization credentials (`Bearer <secret>`), or is its HMAC signature's secret."""

    name: ClassVar[str] = "grafana"
    variable: ClassVar[str] = "ONCALL_MEMORY_GRAFANA_SECRET"
    setting = "grafana.secret"  # its own settings group (`config.py`)
    body: ClassVar[type[BaseModel] | None] = GrafanaWebhook

    def carries(self, secret: str, headers: Mapping[str, str]) -> bool | None:
        """A right bearer token is enough; a signature needs the body; neither is refused unread."""
        if same_secret(bearer(headers), secret):
            return True
        return None if headers.get(SIGNATURE) else False

    def authentic(self, secret: str, headers: Mapping[str, str], raw: bytes) -> bool:
        return _signature_ok(secret, headers, raw)  # asked only when `carries` found a signature to check

    def jobs(self, body: Any, settings: Settings, known: Mapping[str, Any]) -> tuple[list[Job], int | str]:
        posted = body.get("alerts") if isinstance(body, dict) else None
        return grafana_jobs(GrafanaWebhook.model_validate(body), settings.service.label_facts, known, posted=posted)

    def read(self, job: Job, settings: Settings, known: Mapping[str, Any]) -> Job:
        return read_alerts(job, settings.service.label_facts, known) if job.unread else job
