"""Pager webhooks in: PagerDuty v3 (signed); Jira's and incident.io's (signed) and GitLab's (its secret token), to
learn; and every pager an integration offers through the `webhook` hook, built in (Alertmanager, Opsgenie,
Grafana) or installed (`webhook.Webhook`, mounted by `mount`). Each answers 202 as soon as its jobs are
claimed; the worker looks up and posts.

The body is redacted as a whole as soon as it is parsed (its labels and annotations before any fact is
read from them); the alert and the job built from it are then not scanned again.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from pydantic import BaseModel, Field, SecretStr, ValidationError

from ..credentials import same_secret
from ..errors import InvalidInput
from ..ingest.backlog import validation_message
from ..integrations.gitlab import webhook as gitlab_webhook
from ..integrations.incident_io import webhook as incident_io_webhook
from ..integrations.jira import webhook as jira_webhook
from ..integrations.pagerduty.webhook import (
    LEARN_EVENTS,
    IncidentRef,
    PagerDutyWebhook,
    PDIncident,
    learn_job,
    pagerduty_job,
    verify_signature,
)
from ..jobs import Job
from ..redact import already_redacted, redact_all
from ..webhook import Webhook
from .auth import faces_the_network, pager_on
from .body import documented_body, parse, parse_json, raw_json_body
from .contract import WEBHOOK_ERRORS
from .deps import DispatcherDep, LearningDep, MemoryDep, SettingsDep
from .worker import Dispatcher

router = APIRouter(prefix="/webhooks", tags=["webhooks"], responses=WEBHOOK_ERRORS)
log = logging.getLogger(__name__)


def accept(dispatcher: Dispatcher, jobs: list[Job], ignored: int = 0) -> dict[str, Any]:
    accepted, duplicates = dispatcher.submit(jobs)
    answer: dict[str, Any] = {"accepted": accepted, "duplicates": duplicates}
    if ignored:
        answer["ignored"] = ignored
    return answer


@router.post("/pagerduty", status_code=202, openapi_extra=documented_body(PagerDutyWebhook))
def pagerduty(
    request: Request,
    settings: SettingsDep,
    memory: MemoryDep,
    dispatcher: DispatcherDep,
    learning: LearningDep,
    raw: bytes = Depends(raw_json_body),
) -> dict:
    pager_on(settings, "/webhooks/pagerduty")
    if settings.pagerduty.webhook_secret is not None:
        secret = settings.pagerduty.webhook_secret.get_secret_value()
        if not verify_signature(secret, raw, request.headers.get("x-pagerduty-signature")):
            raise HTTPException(401, "missing or wrong X-PagerDuty-Signature")
    hook = parse(PagerDutyWebhook, redact_all(parse_json(raw)))
    event = hook.event
    if event.event_type == "incident.triggered":
        known = memory.known_values()
        with already_redacted():
            return accept(dispatcher, [pagerduty_job(parse(PDIncident, event.data), known)])
    if event.event_type in LEARN_EVENTS and "pagerduty" in learning:
        # incident.resolved carries the incident; incident.annotated an incident_note, whose incident it is.
        data = event.data.get("incident") if event.event_type == "incident.annotated" else event.data
        incident = parse(IncidentRef, data if isinstance(data, dict) else {})
        return accept(dispatcher, [learn_job(incident.id, event.id, event.event_type)])
    return {"accepted": 0, "duplicates": 0, "ignored": event.event_type}


def _learning_secret(secret: SecretStr | None, learner: bool, off: str) -> str:
    """A learning webhook's signing secret; a 404 saying what to set (`off`) until it and its learner are."""
    if secret is None or not learner:
        raise HTTPException(404, off)
    return secret.get_secret_value()


@router.post("/jira", status_code=202, openapi_extra=documented_body(jira_webhook.JiraWebhook))
def jira(
    request: Request,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    learning: LearningDep,
    raw: bytes = Depends(raw_json_body),
) -> dict:
    """A Jira admin webhook: a resolved issue is read back and remembered (learning); nothing is posted."""
    secret = _learning_secret(
        settings.jira.webhook_secret,
        "jira" in learning,
        "learning from Jira is off: set ONCALL_MEMORY_JIRA_WEBHOOK_SECRET (the webhook's secret) and "
        "ONCALL_MEMORY_JIRA_URL, _EMAIL and _TOKEN (to read the issue back)",
    )
    if not jira_webhook.verify_signature(secret, raw, request.headers.get("x-hub-signature")):
        raise HTTPException(401, "missing or wrong X-Hub-Signature")
    hook = parse(jira_webhook.JiraWebhook, redact_all(parse_json(raw)))
    if hook.webhookEvent not in jira_webhook.LEARN_EVENTS or not jira_webhook.resolved(hook):
        return {"accepted": 0, "duplicates": 0, "ignored": hook.webhookEvent}
    delivery = request.headers.get("x-atlassian-webhook-identifier")
    return accept(dispatcher, [jira_webhook.learn_job(hook, delivery[:100] if delivery else None)])


@router.post("/incident_io", status_code=202, openapi_extra=documented_body(incident_io_webhook.IncidentIoEvent))
def incident_io(
    request: Request,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    learning: LearningDep,
    raw: bytes = Depends(raw_json_body),
) -> dict:
    """An incident.io webhook (Svix-signed): an incident that closed is read back and remembered (learning)."""
    secret = _learning_secret(
        settings.incident_io.webhook_secret,
        "incident_io" in learning,
        "learning from incident.io is off: set ONCALL_MEMORY_INCIDENT_IO_WEBHOOK_SECRET (the endpoint's signing "
        "secret) and ONCALL_MEMORY_INCIDENT_IO_TOKEN (to read the incident back)",
    )
    if not incident_io_webhook.verify_signature(secret, request.headers, raw):
        raise HTTPException(401, "missing, wrong or stale webhook-signature (Svix: webhook-id, webhook-timestamp)")
    event, incident = incident_io_webhook.incident_of(redact_all(parse_json(raw)))
    if event not in incident_io_webhook.LEARN_EVENTS or incident_io_webhook.closed(incident, event) is False:
        return {"accepted": 0, "duplicates": 0, "ignored": str(event)[:100]}
    incident_id = parse(IncidentIoRef, incident).id
    return accept(dispatcher, [incident_io_webhook.learn_job(incident_id, request.headers["webhook-id"])])


@router.post("/gitlab", status_code=202, openapi_extra=documented_body(gitlab_webhook.GitLabIssueHook))
def gitlab(
    request: Request,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    learning: LearningDep,
    raw: bytes = Depends(raw_json_body),
) -> dict:
    """A GitLab project or group webhook (Issues events): a closed issue is read back and remembered."""
    secret = _learning_secret(
        settings.gitlab.webhook_secret,
        "gitlab" in learning,
        "learning from GitLab is off: set ONCALL_MEMORY_GITLAB_WEBHOOK_SECRET (the webhook's secret token) and "
        "ONCALL_MEMORY_GITLAB_TOKEN (to read the issue back)",
    )
    if not same_secret(request.headers.get("x-gitlab-token", ""), secret):
        raise HTTPException(401, "missing or wrong X-Gitlab-Token")
    hook = parse(gitlab_webhook.GitLabIssueHook, redact_all(parse_json(raw)))
    if not gitlab_webhook.closed(hook):
        action = hook.object_attributes.action if hook.object_attributes else None
        return {"accepted": 0, "duplicates": 0, "ignored": f"{hook.object_kind[:50]}:{str(action)[:50]}"}
    delivery = request.headers.get("x-gitlab-event-uuid")
    return accept(dispatcher, [gitlab_webhook.learn_job(hook, delivery[:100] if delivery else None)])


class IncidentIoRef(BaseModel):
    id: str = Field(pattern=incident_io_webhook.INCIDENT_ID)


def mount(app: FastAPI, hook: Webhook, where: str) -> None:
    """An installed integration's webhook at `POST /webhooks/<name>`, kept as the built-in pagers are: off
    facing the network until its secret is set, the body bounded and redacted whole before the webhook
    reads it, its jobs through the outbox."""
    route = f"/webhooks/{hook.name}"

    what = hook.credential or f"credential for {route}"

    def refused() -> HTTPException:  # a new one each time: a raised instance keeps its traceback, and grows it
        return HTTPException(401, f"missing or wrong {what}", headers={"WWW-Authenticate": "Bearer"})

    def unproved(request: Request, settings: SettingsDep) -> str | None:
        """Before the body (a dependency FastAPI solves ahead of `raw`): off, or refused on the headers alone.
        The secret the body must still prove (a signature over it), or None: none set, or the headers proved it."""
        secret = hook.secret(settings)
        if secret is None and faces_the_network(settings):
            raise HTTPException(404, f"{route} is off: set {hook.variable} to turn it on")
        said = hook.carries(secret, request.headers) if secret is not None else True
        if said is False:
            raise refused()
        return secret if said is None else None

    def receive(
        request: Request,
        settings: SettingsDep,
        memory: MemoryDep,
        dispatcher: DispatcherDep,
        secret: str | None = Depends(unproved),
        raw: bytes = Depends(raw_json_body),
    ) -> dict:
        if secret is not None and not hook.authentic(secret, request.headers, raw):
            raise refused()
        body = redact_all(parse_json(raw))
        known = memory.known_values()
        try:
            with already_redacted():
                jobs, ignored = hook.jobs(body, settings, known)
        except ValidationError as exc:
            raise HTTPException(422, f"{hook.name}: {validation_message(exc)}") from None
        except InvalidInput as exc:
            raise HTTPException(422, f"{hook.name}: {exc}") from None
        except Exception as exc:  # the plugin's own fault: said and logged, never a 500 for the sender's body
            log.exception("the %s webhook (%s) failed on a body", hook.name, where)
            raise HTTPException(
                422, f"the {hook.name} integration could not read this body ({type(exc).__name__})"
            ) from None
        foreign = [job.key for job in jobs if not job.key.startswith(f"{hook.name}:")]
        if foreign:
            log.error(
                "the %s webhook (%s) made jobs keyed %s: keys start with %r",
                hook.name,
                where,
                foreign[:3],
                f"{hook.name}:",
            )
            raise HTTPException(422, f"the {hook.name} integration made jobs it may not (see the service's log)")
        if isinstance(ignored, str):
            return {"accepted": 0, "duplicates": 0, "ignored": ignored} if not jobs else accept(dispatcher, jobs)
        return accept(dispatcher, jobs, ignored)

    extra = documented_body(hook.body) if hook.body is not None else None
    app.add_api_route(
        route,
        receive,
        methods=["POST"],
        status_code=202,
        tags=["webhooks"],
        summary=f"{hook.name} (integration {where})",
        openapi_extra=extra,
        responses=WEBHOOK_ERRORS,
    )
