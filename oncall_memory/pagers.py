"""What the pagers send (PagerDuty Webhooks v3, Alertmanager v4, Opsgenie), read as they really arrive:
each payload model, and how an alert and its facts are found in it.

Facts found this way are soft preferences, never filters, and each keeps where it was found ("the
container label"), so a reason can say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .alert import Alert
from .label_facts import LABEL_FACTS
from .noise import strip_ceremony, strip_noise

# -- the payloads ------------------------------------------------------------------------------------


class _Loose(BaseModel):
    # Pagers add fields over time; we read what we need. Blank text is no text.
    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)


# PagerDuty object ids: upper-case letters and digits ("PGR0VU2", "Q0RIJJZL24RC6W"). Checked because the
# id goes into a REST path carrying the API token.
PAGERDUTY_ID = r"^[A-Z0-9]{1,32}$"


class PDService(_Loose):
    summary: str | None = None


class PDIncident(_Loose):
    id: str = Field(pattern=PAGERDUTY_ID)
    title: str = Field(min_length=1)
    html_url: str | None = None
    service: PDService | None = None
    incident_key: str | None = None


class IncidentRef(_Loose):
    id: str = Field(pattern=PAGERDUTY_ID)


class PDEvent(_Loose):
    id: str | None = None
    event_type: str
    resource_type: str | None = None
    data: dict[str, Any]


class PagerDutyWebhook(_Loose):
    event: PDEvent


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


class OGAlert(_Loose):
    alertId: str
    message: str = Field(min_length=1)
    description: str | None = None
    tags: list[str] = []
    alias: str | None = None
    entity: str | None = None
    details: dict[str, Any] = {}


class OpsgenieWebhook(_Loose):
    action: str
    alert: OGAlert


# -- facts from labels ---------------------------------------------------------------------------------

# Exporters whose name shows up in `job` and `service` labels of alerts about other things (with
# kube-prometheus, KubePodCrashLooping carries job="kube-state-metrics"): never the service at fault.
EXPORTERS = frozenset(
    {
        "kube-state-metrics",
        "node-exporter",
        "kubelet",
        "cadvisor",
        "apiserver",
        "kube-apiserver",
        "kube-proxy",
        "kube-scheduler",
        "kube-controller-manager",
        "prometheus",
        "prometheus-k8s",
        "alertmanager",
        "alertmanager-main",
        "blackbox-exporter",
        "blackbox",
        "prometheus-operator",
        "pushgateway",
        "kubernetes-pods",
        "kubernetes-nodes",
        "coredns",
        "kube-dns",
        "cert-manager",
        "kafka-exporter",
        "postgres-exporter",
        "mysqld-exporter",
        "redis-exporter",
        "elasticsearch-exporter",
        "rabbitmq-exporter",
    }
)
_ENV_LIKE = re.compile(r"(?:^|[-_.])(?:prod|production|staging|stage|stg|dev|development|qa|test|uat|sandbox)$", re.I)
# The node name's shape tells the managed Kubernetes flavor (the same shapes `noise.py` strips).
_NODE_FLAVORS = (
    (re.compile(r"^aks-", re.I), "aks"),
    (re.compile(r"^gke-", re.I), "gke"),
    (re.compile(r"^ip-\d+-\d+-\d+-\d+\.|\.compute\.internal$", re.I), "eks"),
)


def _exporter(value: str) -> bool:
    """An exporter's name, or one of its pods' (the name, a dash and the pod's suffixes)."""
    name = value.lower()
    return name in EXPORTERS or any(name.startswith(f"{e}-") for e in EXPORTERS)


def _value_for(fact: str, label: str, value: str) -> str | None:
    """The fact a label's value gives, or None when it gives none (an exporter's name, a namespace that
    is not an env, a node name of no known flavor)."""
    value = value.strip()
    if not value:
        return None
    if fact == "service":
        # An exporter's own pod (node-exporter-7xk2p) is named before its suffix is stripped: stripped first,
        # it read as "node".
        if _exporter(value):
            return None
        if label == "pod":
            value = strip_noise(value)  # checkout-6c9d7f-abcde -> checkout
        return None if _exporter(value) else value
    if fact == "env" and label == "namespace":
        return value if _ENV_LIKE.search(value) else None
    if fact == "flavor" and label == "node":
        return next((flavor for pattern, flavor in _NODE_FLAVORS if pattern.search(value)), None)
    return value


def facts_from_labels(
    labels: Mapping[str, Any],
    mapping: Mapping[str, list[str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, Any]:
    """The alert facts (service, env, flavor, component_tags) the labels give, with `fact_sources` saying
    which label each came from. Of the labels that give a fact, the first whose value the memory knows
    (`known`: a container "worker" in namespace "notifications") wins, else the first."""
    facts: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for fact, names in (mapping or LABEL_FACTS).items():
        found = [
            (name, v)
            for name in names
            if isinstance(labels.get(name), str) and (v := _value_for(fact, name, labels[name]))
        ]
        if not found:
            continue
        if fact == "component_tags":
            facts[fact] = list(dict.fromkeys(v for _, v in found))
        else:
            familiar = set((known or {}).get(fact, ()))
            name, value = next(((n, v) for n, v in found if v in familiar), found[0])
            facts[fact], sources[fact] = value, f"{name} label"
    if sources:
        facts["fact_sources"] = sources
    return facts


# -- each pager's alert ----------------------------------------------------------------------------------


def alertmanager_alert(
    a: AMAlert, mapping: Mapping[str, list[str]] | None = None, known: Mapping[str, Iterable[str]] | None = None
) -> Alert | None:
    """The alert in one Alertmanager alert: alertname, summary and description, facts from its labels.
    None when it has no text at all. (Measured with `eval` and dropped: writing the rule's name as words,
    and removing the label values a description repeats; both lowered MRR on the pager set.)"""
    parts = [
        a.labels.get("alertname", "").strip(),
        a.annotations.get("summary", "").strip(),
        a.annotations.get("description", "").strip(),
    ]
    text = " - ".join(p for p in parts if p)
    return Alert(text=text, **facts_from_labels(a.labels, mapping, known)) if text else None


# "[FIRING:2] KubePodCrashLooping (checkout shop-prod critical)": Alertmanager's default subject, which its
# PagerDuty receiver uses as the incident title. The parenthesised part is label values, no names.
_SUBJECT = re.compile(
    r"^\s*\[(?:FIRING(?::\d+)?|RESOLVED)\]\s*(?P<names>[^()]*?)\s*(?:\((?P<values>[^()]*)\))?\s*$", re.I
)


def pagerduty_alert(incident: PDIncident, known: Mapping[str, Iterable[str]] | None = None) -> Alert:
    """The alert in a PagerDuty incident: its title without Alertmanager's subject ceremony, the PagerDuty
    service as the service, `incident_key` as the signature (an Alertmanager group's dedup key, the
    same key its PagerDuty history carries). Label values listed in an Alertmanager subject become facts
    when the memory knows them as a service or env (`known`)."""
    facts: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if incident.service and incident.service.summary:
        facts["service"], sources["service"] = incident.service.summary, "PagerDuty service"
    subject = _SUBJECT.match(incident.title)
    if subject and subject["values"] and known:
        for value in subject["values"].split():
            for fact in ("service", "env", "flavor"):
                if value in set(known.get(fact, ())) and sources.get(fact, "PagerDuty service") == "PagerDuty service":
                    facts[fact], sources[fact] = value, "alert's labels in the title"
    if sources:
        facts["fact_sources"] = sources
    return Alert(text=strip_ceremony(incident.title) or incident.title, signature=incident.incident_key, **facts)


def opsgenie_alert(
    a: OGAlert, mapping: Mapping[str, list[str]] | None = None, known: Mapping[str, Iterable[str]] | None = None
) -> Alert:
    """The alert in an Opsgenie create: message and description; `entity` as the service, `tags` as
    component tags, and `details` read like labels."""
    facts = facts_from_labels({k: v for k, v in a.details.items() if isinstance(v, str)}, mapping, known)
    sources = facts.pop("fact_sources", {})
    if a.entity:
        facts["service"], sources["service"] = a.entity, "Opsgenie entity"
    facts["component_tags"] = [*a.tags, *facts.get("component_tags", [])]
    if sources:
        facts["fact_sources"] = sources
    return Alert(text=" - ".join(p for p in (a.message, a.description) if p), **facts)
