"""Who may call what. Every comparison is constant-time and never raises on odd bytes: headers may
carry anything (Starlette decodes them as latin-1).

| route | credential |
|---|---|
| /webhooks/pagerduty | `X-PagerDuty-Signature` (HMAC of the body with ONCALL_MEMORY_PAGERDUTY_WEBHOOK_SECRET) |
| /webhooks/alertmanager | `Authorization: Bearer ONCALL_MEMORY_ALERTMANAGER_TOKEN` (its integration's `carries`) |
| /webhooks/opsgenie | ONCALL_MEMORY_OPSGENIE_TOKEN as a custom header, a bearer token or a basic-auth password (the same) |
| /webhooks/grafana, and an installed pager's | the integration's own check (`webhook.Webhook`), asked before the body where it can be |
| /webhooks/jira | `X-Hub-Signature` (HMAC of the body with ONCALL_MEMORY_JIRA_WEBHOOK_SECRET); off without it |
| /webhooks/incident_io | Svix's `webhook-signature` (HMAC of id, timestamp and body with ONCALL_MEMORY_INCIDENT_IO_WEBHOOK_SECRET; a stale timestamp refused); off without it |
| /webhooks/gitlab | `X-Gitlab-Token` (the webhook's secret token, ONCALL_MEMORY_GITLAB_WEBHOOK_SECRET); off without it |
| /similar, /feedback, /stats, /metrics, /mcp, /docs, /redoc, /openapi.json | `Authorization: Bearer ONCALL_MEMORY_API_TOKEN` |
| / and /incidents/{id} (the search page) | the same token as a bearer token, or the session cookie `/login` sets (`page.py`) |

A pager's route is on when its secret is set. Without it the route is open on a loopback address (trying it
out on one machine) and **off** (404, naming the variable) on any other: a team that uses one pager sets
that pager's secret and nothing else. The API token is the one credential `serve` insists on.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

from fastapi import HTTPException, Request
from pydantic import SecretStr

from ..credentials import bearer, same_secret
from ..hosts import is_loopback
from ..integrations import built_in_webhooks
from ..settings import Settings
from ..webhook import Webhook
from .deps import settings_of


def faces_the_network(settings: Settings) -> bool:
    return not (is_loopback(settings.service.host) or settings.service.allow_unauthenticated)


def pagers_off(settings: Settings, hooks: Sequence[Webhook] | None = None) -> list[tuple[str, str]]:
    """The pager routes that are off for want of their secret, with the variable that turns each on (none on
    a loopback address), among `hooks` (by default the built-in integrations' webhooks). A learner off for
    want of its API says so itself (`Webhook.off`), on every address."""
    if not faces_the_network(settings):
        return []
    hooks = built_in_webhooks() if hooks is None else hooks
    return [
        (f"/webhooks/{h.name}", h.variable) for h in hooks if h.off(settings) is None and h.secret(settings) is None
    ]


def _check(token: SecretStr | None, offered: list[str], what: str) -> None:
    if token is None:
        return  # not configured: open on loopback; elsewhere the route is off before this (`pager_on`)
    expected = token.get_secret_value()
    # Every offered credential is compared, so the time taken does not say which one was tried.
    if not sum(same_secret(o, expected) for o in offered):
        raise HTTPException(401, f"missing or wrong {what}", headers={"WWW-Authenticate": "Bearer"})


async def api_token(request: Request) -> None:
    """Dependency of the lookup API and the docs (async: run on the event loop, no thread-pool hop)."""
    _check(settings_of(request).service.api_token, [bearer(request.headers)], "bearer token (ONCALL_MEMORY_API_TOKEN)")


PEER = "oncall_memory.peer"  # the connection's own address, in the ASGI scope


class RecordPeer:
    """Keeps the connection's own address before a proxy-headers middleware replaces the client with the one
    a proxy names: whether a header came from a trusted proxy is a question about the connection."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            scope[PEER] = (scope.get("client") or ("", 0))[0]
        await self.app(scope, receive, send)


def trusted_peer(request: Request, trusted: str) -> bool:
    """Did the request come straight from one of `trusted` (comma-separated addresses or networks, "*")?"""
    peer = str(request.scope.get(PEER) or (request.client.host if request.client else ""))
    entries = [t.strip() for t in trusted.split(",") if t.strip()]
    if not peer or not entries:
        return False
    if "*" in entries:
        return True
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return peer in entries  # a test client's or a unix socket's name
    for entry in entries:
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def exposure(settings: Settings) -> list[str]:
    """What would face the network unauthenticated: the API's routes without the API token (a pager's route
    without its secret is off there, not open)."""
    if not faces_the_network(settings) or settings.service.api_token is not None:
        return []
    routes = "/ (search page), /similar, /feedback, /stats, /metrics, /mcp, /docs, /redoc, /openapi.json"
    return [f"{routes} (set ONCALL_MEMORY_API_TOKEN)"]
