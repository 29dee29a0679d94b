"""Inbound webhook payloads (PagerDuty v3, Alertmanager v4, Opsgenie) and the jobs they become.

A job is one lookup to do and where to post it, under a key that identifies the alert across
redeliveries: that key is what makes posting exactly-once.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..alert import Alert
from ..facts import Redacted


class Job(Redacted):
    key: str  # e.g. "pagerduty:P1234", "alertmanager:<fingerprint>:<startsAt>", "opsgenie:<alertId>"
    alert: Alert
    pagerduty_incident: str | None = None  # post a note on this incident
    title: str  # how the alert is named in the message


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
    return Job(
        key=f"pagerduty:{incident.id}",
        alert=Alert(text=incident.title, service=service),
        pagerduty_incident=incident.id,
        title=incident.title,
    )


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
    alerts: list[AMAlert]


def alertmanager_jobs(hook: AlertmanagerWebhook, label_facts: dict[str, list[str]]) -> tuple[list[Job], int]:
    """One job per firing alert, and how many firing alerts had no text to look up (resolved alerts
    need no lookup)."""
    jobs, ignored = [], 0
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
        jobs.append(
            Job(
                key=f"alertmanager:{a.fingerprint}:{a.startsAt}",
                alert=Alert(text=text, **facts),
                title=parts[1] or name or text,
            )
        )
    return jobs, ignored


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
    return Job(key=f"opsgenie:{a.alertId}", alert=Alert(text=text, component_tags=a.tags), title=a.message)
