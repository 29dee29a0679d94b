"""PagerDuty's Webhooks v3 in: the payload as it really arrives, its signature, the alert in an incident, and
the jobs an event becomes (`incident.triggered`: look it up and post a note; `incident.resolved` and
`incident.annotated`: remember it).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ...credentials import same_secret
from ...domain.alert import Alert
from ...domain.blank import NonBlank
from ...domain.label_facts import facts_from_labels, monitor_tags
from ...domain.noise import strip_ceremony, subject
from ...jobs import Job
from ...settings import Settings
from ...webhook import Webhook
from .. import Loose

LEARN_EVENTS = ("incident.resolved", "incident.annotated")

# PagerDuty object ids: upper-case letters and digits ("PGR0VU2", "Q0RIJJZL24RC6W"). Checked because the
# id goes into a REST path carrying the API token.
PAGERDUTY_ID = r"^[A-Z0-9]{1,32}$"


class PDService(Loose):
    summary: str | None = None


class PDIncident(Loose):
    id: str = Field(pattern=PAGERDUTY_ID)
    title: NonBlank
    html_url: str | None = None
    service: PDService | None = None
    incident_key: str | None = None


class IncidentRef(Loose):
    id: str = Field(pattern=PAGERDUTY_ID)


class PDEvent(Loose):
    id: str | None = None
    event_type: str
    resource_type: str | None = None
    data: dict[str, Any]


class PagerDutyWebhook(Loose):
    event: PDEvent


def pagerduty_alert(incident: PDIncident, known: Mapping[str, Iterable[str]] | None = None) -> Alert:
    """The alert in a PagerDuty incident: its title without a pager's ceremony, the PagerDuty
    service as the service, `incident_key` as the signature (an Alertmanager group's dedup key, the
    same key its PagerDuty history carries). Label values listed in an Alertmanager subject become facts
    when the memory knows them as a service or env (`known`); a Datadog monitor's tags are read as labels."""
    facts: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if incident.service and incident.service.summary:
        facts["service"], sources["service"] = incident.service.summary, "PagerDuty service"
    # "[FIRING:2] KubePodCrashLooping (checkout shop-prod critical)": Alertmanager's default subject, which its
    # PagerDuty receiver uses as the incident title. The parenthesised part is label values, no names.
    read = subject(incident.title)
    if read and read[1] and known:
        for value in read[1].split():
            for fact in ("service", "env", "flavor"):
                if value in set(known.get(fact, ())) and sources.get(fact, "PagerDuty service") == "PagerDuty service":
                    facts[fact], sources[fact] = value, "alert's labels in the title"
    # "[P2] [Triggered on {service:checkout,env:prod}] Checkout latency": a Datadog monitor's title, its tags
    # named. A tag's service stands in for PagerDuty's (a routing target, often a team's) only when the memory
    # knows it and not PagerDuty's: the incidents it holds from PagerDuty carry PagerDuty's service.
    if tags := monitor_tags(incident.title):
        tagged = facts_from_labels(tags, known=known)
        for fact, source in tagged.pop("fact_sources", {}).items():
            familiar = set((known or {}).get(fact, ()))
            if fact not in facts or (tagged[fact] in familiar and facts[fact] not in familiar):
                facts[fact], sources[fact] = tagged[fact], f"{source.removesuffix(' label')} tag in the title"
        if tagged.get("component_tags"):
            facts["component_tags"] = tagged["component_tags"]
    if sources:
        facts["fact_sources"] = sources
    return Alert(text=strip_ceremony(incident.title) or incident.title, signature=incident.incident_key, **facts)


def rest_incident_alert(raw: dict[str, Any], known: Mapping[str, Iterable[str]] | None = None) -> Alert:
    """The alert in an incident as the REST API gives it (`GET /incidents/{id}`): the same reading as a
    webhook's, an incident without a title named by its id."""
    return pagerduty_alert(PDIncident.model_validate({**raw, "title": raw.get("title") or raw.get("id")}), known)


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """PagerDuty v3: `v1=<hex HMAC-SHA256 of the raw body>`, comma-separated during secret rotation."""
    if not header:
        return False
    expected = "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return any(same_secret(candidate.strip(), expected) for candidate in header.split(","))


def pagerduty_job(incident: PDIncident, known: Mapping[str, Iterable[str]] | None = None) -> Job:
    return Job.single(f"pagerduty:{incident.id}", pagerduty_alert(incident, known), incident.title, record=incident.id)


def learn_job(incident_id: str, event_id: str | None, event_type: str) -> Job:
    """Remember this incident now (resolved) or again (annotated). Keyed by PagerDuty's event id: each
    event once."""
    key = f"pagerduty-learn:{incident_id}:{event_id or event_type}"
    return Job.learn(key, event_type, incident_id)


class PagerDutyHook(Webhook):
    """`POST /webhooks/pagerduty`, mounted through the `webhook` hook as an installed pager's is. Its secret
    (ONCALL_MEMORY_PAGERDUTY_WEBHOOK_SECRET) signs the body (`X-PagerDuty-Signature`, checked once the
    bounded body is read). `incident.triggered` is looked up and answered with a note; `incident.resolved`
    and `incident.annotated` are remembered when the REST API (ONCALL_MEMORY_PAGERDUTY_TOKEN) can read the
    incident back; any other event is acknowledged and ignored."""

    name: ClassVar[str] = "pagerduty"
    variable: ClassVar[str] = "ONCALL_MEMORY_PAGERDUTY_WEBHOOK_SECRET"
    setting = "pagerduty.webhook_secret"  # its own settings group (`config.py`)
    body: ClassVar[type[BaseModel] | None] = PagerDutyWebhook
    credential: ClassVar[str | None] = "X-PagerDuty-Signature"
    challenge: ClassVar[str | None] = None
    guard: ClassVar[str | None] = "signed (X-PagerDuty-Signature)"

    def authentic(self, secret: str, headers: Mapping[str, str], raw: bytes) -> bool:
        return verify_signature(secret, raw, headers.get("x-pagerduty-signature"))

    def jobs(self, body: Any, settings: Settings, known: Mapping[str, Any]) -> tuple[list[Job], int | str]:
        event = PagerDutyWebhook.model_validate(body).event
        if event.event_type == "incident.triggered":
            return [pagerduty_job(PDIncident.model_validate(event.data), known)], 0
        if event.event_type in LEARN_EVENTS and settings.pagerduty.token is not None:
            # incident.resolved carries the incident; incident.annotated an incident_note, whose incident it is.
            data = event.data.get("incident") if event.event_type == "incident.annotated" else event.data
            incident = IncidentRef.model_validate(data if isinstance(data, dict) else {})
            return [learn_job(incident.id, event.id, event.event_type)], 0
        return [], event.event_type
