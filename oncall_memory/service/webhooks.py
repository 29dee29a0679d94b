"""Pager webhooks in: PagerDuty v3 (signed), Alertmanager v4, Opsgenie. Each answers 202 as soon as
its jobs are claimed; the worker looks up and posts."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request

from .body import parse, parse_json, raw_json_body
from .inbound import (
    AlertmanagerWebhook,
    Job,
    OpsgenieWebhook,
    PagerDutyWebhook,
    PDIncident,
    alertmanager_jobs,
    opsgenie_job,
    pagerduty_job,
)

router = APIRouter(prefix="/webhooks")


def same_secret(given: str, expected: str) -> bool:
    """Constant-time, and never raises: headers may carry any byte (Starlette decodes them as latin-1)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("utf-8", "surrogateescape"))


def verify_pagerduty_signature(secret: str, body: bytes, header: str | None) -> bool:
    """PagerDuty v3: `v1=<hex HMAC-SHA256 of the raw body>`, comma-separated during secret rotation."""
    if not header:
        return False
    expected = "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return any(same_secret(candidate.strip(), expected) for candidate in header.split(","))


def accept(request: Request, jobs: list[Job]) -> dict[str, Any]:
    queued = [j.key for j in jobs if request.app.state.enricher.submit(j)]
    return {"accepted": len(queued), "duplicates": len(jobs) - len(queued)}


@router.post("/pagerduty", status_code=202)
def pagerduty(request: Request, raw: bytes = Depends(raw_json_body)) -> dict:
    settings = request.app.state.settings
    if settings.pagerduty_webhook_secret is not None:
        secret = settings.pagerduty_webhook_secret.get_secret_value()
        if not verify_pagerduty_signature(secret, raw, request.headers.get("x-pagerduty-signature")):
            raise HTTPException(401, "missing or wrong X-PagerDuty-Signature")
    hook = parse(PagerDutyWebhook, parse_json(raw))
    if hook.event.event_type != "incident.triggered":
        return {"accepted": 0, "duplicates": 0, "ignored": hook.event.event_type}
    return accept(request, [pagerduty_job(parse(PDIncident, hook.event.data))])


def alertmanager_token(request: Request) -> None:
    """Alertmanager's `http_config.authorization` (Bearer by default), checked before the body is read."""
    token = request.app.state.settings.alertmanager_token
    if token is not None and not same_secret(request.headers.get("authorization", ""),
                                             f"Bearer {token.get_secret_value()}"):
        raise HTTPException(401, "missing or wrong bearer token")


@router.post("/alertmanager", status_code=202, dependencies=[Depends(alertmanager_token)])
def alertmanager(request: Request, raw: bytes = Depends(raw_json_body)) -> dict:
    hook = parse(AlertmanagerWebhook, parse_json(raw))
    return accept(request, alertmanager_jobs(hook, request.app.state.settings.label_facts))


@router.post("/opsgenie", status_code=202)
def opsgenie(request: Request, raw: bytes = Depends(raw_json_body)) -> dict:
    hook = parse(OpsgenieWebhook, parse_json(raw))
    if hook.action != "Create":
        return {"accepted": 0, "duplicates": 0, "ignored": hook.action}
    return accept(request, [opsgenie_job(hook)])
