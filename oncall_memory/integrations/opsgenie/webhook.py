"""Opsgenie's webhook integration in: the alert of a `Create` action, with `entity` as the service, `tags` as
component tags and `details` read like labels, and the job it becomes. The route is `OpsgenieHook`, offered
through the `webhook` hook an installed pager uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from ...credentials import basic_password, bearer, same_secret
from ...domain.alert import Alert
from ...domain.alert_list import first_alert
from ...domain.annotations import texts
from ...domain.blank import NonBlank
from ...domain.label_facts import facts_from_labels, monitor_tags
from ...jobs import Job
from ...settings import Settings
from ...webhook import Webhook
from .. import Loose

# What to name the custom header in Opsgenie's webhook integration (a bearer token or basic auth also do).
HEADER = "x-oncall-memory-token"


class OGAlert(Loose):
    alertId: str
    message: NonBlank
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
    component tags, and `details` (then a Datadog monitor title's tags) read like labels."""
    labels = {k: v for k, v in a.details.items() if isinstance(v, str)}
    # A Datadog monitor's title as the message (a webhook filled from `$EVENT_TITLE`):
    # "[Triggered on {service:api}] Name".
    tags = monitor_tags(a.message)
    tagged = tags.keys() - labels.keys()
    labels = {**tags, **labels}
    facts = facts_from_labels(labels, mapping, known)
    sources = {
        fact: f"{name} tag in the message" if (name := source.removesuffix(" label")) in tagged else source
        for fact, source in facts.pop("fact_sources", {}).items()
    }
    if a.entity:
        facts["service"], sources["service"] = a.entity, "Opsgenie entity"
    facts["component_tags"] = [*a.tags, *facts.get("component_tags", [])]
    if sources:
        facts["fact_sources"] = sources
    said = [p for p in (a.message, a.description) if p]
    metrics: list[str] = []
    # Alertmanager's Opsgenie receiver lists the firing alerts in the description (their labels, annotations
    # and rule's link): read back, the first one's annotations are the text and its link names the metrics.
    if a.description and (listed := first_alert(a.description, skip=[a.message])) is not None:
        written, metrics = listed
        said = [p for p in (a.message, *written) if p]
    return Alert(text=" - ".join([*said, *texts(a.details, skip=said)]), metrics=metrics, **facts)


def opsgenie_job(
    hook: OpsgenieWebhook,
    label_facts: Mapping[str, list[str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
) -> Job:
    return Job.single(
        f"opsgenie:{hook.alert.alertId}", opsgenie_alert(hook.alert, label_facts, known), hook.alert.message
    )


class OpsgenieHook(Webhook):
    """`POST /webhooks/opsgenie`, mounted through the `webhook` hook as an installed pager's is. Its secret
    (ONCALL_MEMORY_OPSGENIE_TOKEN) comes in a custom header of Opsgenie's webhook integration (`HEADER`),
    as a bearer token, or as basic auth's password: any one will do, checked before the body is read."""

    name: ClassVar[str] = "opsgenie"
    variable: ClassVar[str] = "ONCALL_MEMORY_OPSGENIE_TOKEN"
    setting = "opsgenie.token"  # its own settings group (`config.py`)
    body: ClassVar[type[BaseModel] | None] = OpsgenieWebhook
    credential: ClassVar[str | None] = f"{HEADER} header, bearer token or basic auth"

    def carries(self, secret: str, headers: Mapping[str, str]) -> bool | None:
        offered = [headers.get(HEADER, ""), bearer(headers), basic_password(headers)]
        # Every offered credential is compared, so the time taken does not say which one was tried.
        return sum(same_secret(o, secret) for o in offered) > 0

    def jobs(self, body: Any, settings: Settings, known: Mapping[str, Any]) -> tuple[list[Job], int | str]:
        hook = OpsgenieWebhook.model_validate(body)
        if hook.action != "Create":
            return [], hook.action
        return [opsgenie_job(hook, settings.service.label_facts, known)], 0
