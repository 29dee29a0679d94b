"""Inbound webhook payloads (PagerDuty v3, Alertmanager v4, Opsgenie) and the jobs they become.

A job is what to look up (one alert, or an Alertmanager group's firing alerts) and where to post the
answer. Each alert has a key that identifies it across redeliveries (that key makes posting exactly
once); a group's job key names the alerts it holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Literal

from ..alert import Alert
from ..facts import Redacted
from ..pagers import (
    EXPORTERS,
    AlertmanagerWebhook,
    AMAlert,
    IncidentRef,
    OpsgenieWebhook,
    PagerDutyWebhook,
    PDIncident,
    alertmanager_alert,
    opsgenie_alert,
    pagerduty_alert,
)

__all__ = [
    "AlertmanagerWebhook",
    "IncidentRef",
    "Item",
    "Job",
    "OpsgenieWebhook",
    "PagerDutyWebhook",
    "PDIncident",
    "alertmanager_jobs",
    "learn_job",
    "opsgenie_job",
    "pagerduty_job",
]


class Item(Redacted):
    key: str  # "pagerduty:P1234", "alertmanager:<fingerprint>:<startsAt>", "opsgenie:<alertId>"
    alert: Alert
    title: str  # how the alert is named in the message: its rule and the labels that tell it from its group
    detail: str | None = None  # its description, when the title is not all of it
    runbook: str | None = None  # its runbook link (http(s) only)


class Job(Redacted):
    key: str  # the alert's key, or for a group, "alertmanager:<groupKey>" (+ "#<hash of its new alerts>")
    items: list[Item]
    kind: Literal["lookup", "learn"] = "lookup"  # learn: a resolved or annotated incident to remember
    group: str | None = None  # a group's name (Alertmanager's alertname group label)
    pagerduty_incident: str | None = None  # post a note on this incident

    @classmethod
    def single(cls, key: str, alert: Alert, title: str, pagerduty_incident: str | None = None) -> Job:
        return cls(key=key, items=[Item(key=key, alert=alert, title=title)], pagerduty_incident=pagerduty_incident)

    @property
    def title(self) -> str:
        """How the message names what fired: the alert's title, or how many of the group fired."""
        if len(self.items) == 1:
            return self.items[0].title
        names = self.group or ", ".join(dict.fromkeys(i.alert.text.split(" - ")[0] for i in self.items))
        return f"{len(self.items)} firing: {names}"


def pagerduty_job(incident: PDIncident, known: Mapping[str, Iterable[str]] | None = None) -> Job:
    return Job.single(
        f"pagerduty:{incident.id}", pagerduty_alert(incident, known), incident.title, pagerduty_incident=incident.id
    )


def learn_job(incident_id: str, event_id: str | None, event_type: str) -> Job:
    """Remember this incident now (resolved) or again (annotated). Keyed by PagerDuty's event id: each
    event once."""
    key = f"pagerduty-learn:{incident_id}:{event_id or event_type}"
    return Job(
        key=key,
        kind="learn",
        items=[Item(key=key, alert=Alert(text=event_type), title=event_type)],
        pagerduty_incident=incident_id,
    )


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
        alert = alertmanager_alert(a, label_facts, known)
        if alert is None:
            ignored += 1
            continue
        items.append(
            Item(
                key=f"alertmanager:{a.fingerprint}:{a.startsAt}",
                alert=alert,
                title=alert_heading(a) or alert.text,
                detail=" — ".join(
                    dict.fromkeys(
                        t for t in (a.annotations.get(k, "").strip() for k in ("summary", "description")) if t
                    )
                )
                or None,
                runbook=web_link(a.annotations.get("runbook_url")),
            )
        )
    if not items:
        return [], ignored
    return [Job(key=job_key(hook.groupKey, items), items=items, group=hook.groupLabels.get("alertname"))], ignored


# A job key is stored with every claim and delivery of its alerts: a key as long as its group would make an
# alert storm's storage grow with the square of its size (1,000 alerts without a groupKey: 105 MB).
LONGEST_KEY = 200


def job_key(group_key: str | None, items: list[Item]) -> str:
    """`alertmanager:<groupKey>`, or for a post without one (some senders and proxies), a digest of its alerts'
    keys; a groupKey longer than LONGEST_KEY is kept as its start and a digest of the whole."""
    if not group_key:
        digest = hashlib.sha256("\n".join(sorted(i.key for i in items)).encode()).hexdigest()[:24]
        return f"alertmanager:alerts-{digest}"
    if len(group_key) > LONGEST_KEY:
        digest = hashlib.sha256(group_key.encode()).hexdigest()[:24]
        return f"alertmanager:{group_key[: LONGEST_KEY // 2]}~{digest}"
    return f"alertmanager:{group_key}"


# The labels that tell one alert of a group from another (kubernetes-mixin rules share their summaries:
# "Pod is crash looping." twice says nothing), in the order they are read.
IDENTIFYING = (
    "namespace",
    "pod",
    "container",
    "deployment",
    "statefulset",
    "daemonset",
    "job_name",
    "node",
    "persistentvolumeclaim",
    "horizontalpodautoscaler",
    "instance",
    "job",
    "service",
    "cluster",
)


def alert_heading(a: AMAlert) -> str:
    """`KubePodCrashLooping · shop/checkout-6c9d7f-abcde · container checkout · cluster shop-prod`: the rule's
    name and the labels that identify this alert (exporters' names left out), else the summary."""
    labels = {k: v.strip() for k, v in a.labels.items() if isinstance(v, str) and v.strip()}
    name = labels.get("alertname") or a.annotations.get("summary", "").strip()
    parts, used = [name] if name else [], set()
    if "namespace" in labels and "pod" in labels:
        parts.append(f"{labels['namespace']}/{labels['pod']}")
        used |= {"namespace", "pod"}
    for key in IDENTIFYING:
        value = labels.get(key)
        if key in used or not value or value.lower() in EXPORTERS:
            continue
        parts.append(f"{key} {value}")
    return " · ".join(parts)


def web_link(url: object) -> str | None:
    return url.strip() if isinstance(url, str) and url.strip().lower().startswith(("https://", "http://")) else None


def opsgenie_job(
    hook: OpsgenieWebhook,
    label_facts: Mapping[str, list[str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
) -> Job:
    return Job.single(
        f"opsgenie:{hook.alert.alertId}", opsgenie_alert(hook.alert, label_facts, known), hook.alert.message
    )
