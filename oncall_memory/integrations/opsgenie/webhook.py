"""Opsgenie's webhook integration in: the alert of a `Create` action, with `entity` as the service, `tags` as
component tags and `details` read like labels, and the job it becomes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field

from ...domain.alert import Alert
from ...domain.annotations import texts
from ...domain.label_facts import facts_from_labels
from ...jobs import Job
from .. import Loose

# What to name the custom header in Opsgenie's webhook integration (a bearer token or basic auth also do).
HEADER = "x-oncall-memory-token"


class OGAlert(Loose):
    alertId: str
    message: str = Field(min_length=1)
    description: str | None = None
    tags: list[str] = []
    alias: str | None = None
    entity: str | None = None
    details: dict[str, Any] = {}


class OpsgenieWebhook(Loose):
    action: str
    alert: OGAlert


def opsgenie_alert(
    a: OGAlert, mapping: Mapping[str, list[str]] | None = None, known: Mapping[str, Iterable[str]] | None = None
) -> Alert:
    """The alert in an Opsgenie create: message, description and the prose among `details` (the annotations
    of an Alertmanager alert Opsgenie received, a team's own keys); `entity` as the service, `tags` as
    component tags, and `details` read like labels."""
    facts = facts_from_labels({k: v for k, v in a.details.items() if isinstance(v, str)}, mapping, known)
    sources = facts.pop("fact_sources", {})
    if a.entity:
        facts["service"], sources["service"] = a.entity, "Opsgenie entity"
    facts["component_tags"] = [*a.tags, *facts.get("component_tags", [])]
    if sources:
        facts["fact_sources"] = sources
    said = [p for p in (a.message, a.description) if p]
    return Alert(text=" - ".join([*said, *texts(a.details, skip=said)]), **facts)


def opsgenie_job(
    hook: OpsgenieWebhook,
    label_facts: Mapping[str, list[str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
) -> Job:
    return Job.single(
        f"opsgenie:{hook.alert.alertId}", opsgenie_alert(hook.alert, label_facts, known), hook.alert.message
    )
