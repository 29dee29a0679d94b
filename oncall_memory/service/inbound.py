"""Inbound webhook payloads (PagerDuty v3, Alertmanager v4, Opsgenie) and the jobs they become.

A job is what to look up (one alert, or an Alertmanager group's firing alerts) and where to post the
answer. Each alert has a key that identifies it across redeliveries (that key makes posting exactly
once); a group's job key names the alerts it holds.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..alert import Alert
from ..facts import Redacted


class Item(Redacted):
    key: str  # "pagerduty:P1234", "alertmanager:<fingerprint>:<startsAt>", "opsgenie:<alertId>"
    alert: Alert
    title: str  # how the alert is named in the message


class Job(Redacted):
    key: str  # the alert's key, or for a group, "alertmanager:<groupKey>" (+ "#<hash of its new alerts>")
    items: list[Item]
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


class _Loose(BaseModel):
    # Pagers add fields over time; we read what we need. Blank text is no text.
    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)


# PagerDuty object ids: upper-case letters and digits ("PGR0VU2", "Q0RIJJZL24RC6W"). Checked because the
# id goes into a REST path carrying the API token.
PAGERDUTY_ID = r"^[A-Z0-9]{1,32}$"


# -- PagerDuty Webhooks v3 -------------------------------------------------------------------

class PDService(_Loose):
    summary: str | None = None


class PDIncident(_Loose):
    id: str = Field(pattern=PAGERDUTY_ID)
    title: str = Field(min_length=1)
    html_url: str | None = None
    service: PDService | None = None
    incident_key: str | None = None


class PDEvent(_Loose):
    event_type: str
    resource_type: str | None = None
    data: dict[str, Any]


class PagerDutyWebhook(_Loose):
    event: PDEvent


def pagerduty_job(incident: PDIncident) -> Job:
    service = incident.service.summary if incident.service else None
    return Job.single(f"pagerduty:{incident.id}", Alert(text=incident.title, service=service), incident.title,
                      pagerduty_incident=incident.id)


# -- Alertmanager webhook (version 4) --------------------------------------------------------

class AMAlert(_Loose):
    status: str
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    startsAt: str
    fingerprint: str


class AlertmanagerWebhook(_Loose):
    version: str | None = None
    status: str | None = None
    groupKey: str | None = None
    groupLabels: dict[str, str] = {}
    alerts: list[AMAlert]


def alertmanager_jobs(hook: AlertmanagerWebhook, label_facts: dict[str, list[str]]) -> tuple[list[Job], int]:
    """The group as one job holding its firing alerts (one message per group and target), and how many
    firing alerts had no text to look up. Resolved alerts need no lookup."""
    items, ignored = [], 0
    for a in hook.alerts:
        if a.status != "firing":
            continue
        name = a.labels.get("alertname", "").strip()
        parts = [name, a.annotations.get("summary", "").strip(), a.annotations.get("description", "").strip()]
        text = " - ".join(p for p in parts if p)
        if not text:
            ignored += 1
            continue
        facts: dict[str, Any] = {}
        for fact, labels in label_facts.items():
            values = [a.labels[label] for label in labels if a.labels.get(label)]
            if values:
                facts[fact] = values if fact == "component_tags" else values[0]
        items.append(Item(key=f"alertmanager:{a.fingerprint}:{a.startsAt}", alert=Alert(text=text, **facts),
                          title=parts[1] or name or text))
    if not items:
        return [], ignored
    group = hook.groupKey or ",".join(sorted(i.key for i in items))
    return [Job(key=f"alertmanager:{group}", items=items, group=hook.groupLabels.get("alertname"))], ignored


# -- Opsgenie outgoing webhook ---------------------------------------------------------------

class OGAlert(_Loose):
    alertId: str
    message: str = Field(min_length=1)
    description: str | None = None
    tags: list[str] = []
    alias: str | None = None


class OpsgenieWebhook(_Loose):
    action: str
    alert: OGAlert


def opsgenie_job(hook: OpsgenieWebhook) -> Job:
    a = hook.alert
    text = " - ".join(p for p in (a.message, a.description) if p)
    return Job.single(f"opsgenie:{a.alertId}", Alert(text=text, component_tags=a.tags), a.message)
