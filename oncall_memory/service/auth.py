"""Who may call what. Every comparison is constant-time and never raises on odd bytes: headers may
carry anything (Starlette decodes them as latin-1).

| route | credential |
|---|---|
| /webhooks/pagerduty | `X-PagerDuty-Signature` (HMAC of the body with ONCALL_MEMORY_PAGERDUTY_WEBHOOK_SECRET) |
| /webhooks/alertmanager | `Authorization: Bearer ONCALL_MEMORY_ALERTMANAGER_TOKEN` |
| /webhooks/opsgenie | ONCALL_MEMORY_OPSGENIE_TOKEN as a custom header, a bearer token or a basic-auth password |
| /similar, /feedback, /stats, /metrics, /mcp, /docs, /redoc, /openapi.json | `Authorization: Bearer ONCALL_MEMORY_API_TOKEN` |
| / and /incidents/{id} (the search page) | the same token as a bearer token, or the session cookie `/login` sets (`page.py`) |
"""

from __future__ import annotations

import base64
import binascii
import ipaddress

from fastapi import HTTPException, Request
from pydantic import SecretStr

from ..integrations.opsgenie.webhook import HEADER as OPSGENIE_HEADER
from ..settings import Settings
from ..signatures import same_secret
from .deps import settings_of


def _bearer(request: Request) -> str:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def _basic_password(request: Request) -> str:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return ""
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return ""
    return decoded.partition(":")[2]


def _check(token: SecretStr | None, offered: list[str], what: str) -> None:
    if token is None:
        return  # not configured: open (serve refuses this on a non-loopback address, see `exposure`)
    expected = token.get_secret_value()
    # Every offered credential is compared, so the time taken does not say which one was tried.
    if not sum(same_secret(o, expected) for o in offered):
        raise HTTPException(401, f"missing or wrong {what}", headers={"WWW-Authenticate": "Bearer"})


def api_token(request: Request) -> None:
    """Dependency of the lookup API and the docs."""
    _check(settings_of(request).service.api_token, [_bearer(request)], "bearer token (ONCALL_MEMORY_API_TOKEN)")


def alertmanager_token(request: Request) -> None:
    """Alertmanager's `http_config.authorization` (Bearer by default), checked before the body is read."""
    _check(settings_of(request).service.alertmanager_token, [_bearer(request)], "bearer token")


def opsgenie_token(request: Request) -> None:
    """Opsgenie's webhook integration sends custom headers, or basic auth: any one carrying the secret."""
    offered = [request.headers.get(OPSGENIE_HEADER, ""), _bearer(request), _basic_password(request)]
    _check(
        settings_of(request).service.opsgenie_token, offered, f"{OPSGENIE_HEADER} header, bearer token or basic auth"
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure(settings: Settings) -> list[str]:
    """What would face the network unauthenticated: one line per route, naming the variable that closes it."""
    if is_loopback(settings.service.host) or settings.service.allow_unauthenticated:
        return []
    open_routes = [
        (
            settings.service.api_token,
            "/ (search page), /similar, /feedback, /stats, /metrics, /mcp, /docs, /redoc, /openapi.json",
            "ONCALL_MEMORY_API_TOKEN",
        ),
        (settings.pagerduty.webhook_secret, "/webhooks/pagerduty", "ONCALL_MEMORY_PAGERDUTY_WEBHOOK_SECRET"),
        (settings.service.alertmanager_token, "/webhooks/alertmanager", "ONCALL_MEMORY_ALERTMANAGER_TOKEN"),
        (settings.service.opsgenie_token, "/webhooks/opsgenie", "ONCALL_MEMORY_OPSGENIE_TOKEN"),
    ]
    return [f"{routes} (set {variable})" for secret, routes, variable in open_routes if secret is None]
