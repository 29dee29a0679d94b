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
| /similar, /stats, /metrics, /docs, /redoc, /openapi.json | `Authorization: Bearer ONCALL_MEMORY_API_TOKEN` (or the local token); open on loopback without an API token |
| / and /incidents/{id} (the search page), POST /page/feedback | the same token as a bearer token, or the session cookie `/login` sets (`page.py`); open on loopback without an API token, the form carrying its CSRF token |
| POST /ingest, /verify, /backup, /feedback; /mcp, /mcp/sse, /mcp/messages/ | the local token (`<data dir>/local-token`, which the CLI on this machine reads) or the API token, **on every address, loopback included** |
| GET /proof | open: answers a challenge only the holder of the local token can (`local_token.proof`), so the CLI knows it is talking to its own service |
| /login, /logout, /static/*, /favicon.*, /docs/assets/* | open (a form and the page's own files) |
| /healthz, /readyz | open (probes; they say nothing about the incidents) |

Every route also checks the `Host` a request names and refuses a state-changing request another site's page
sent (`cross_site.py`). A pager's route is on when its secret is set. Without it the route is open on a loopback
address (trying it out on one machine) and **off** (404, naming the variable) on any other: a team that uses one
pager sets that pager's secret and nothing else. The API token is the one credential `serve` insists on
facing the network; writing to the memory, copying it or checking it needs a credential everywhere: a web
page the engineer opens could otherwise write "fixed by" lines the next responder runs.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from typing import Any

from fastapi import HTTPException, Request
from pydantic import SecretStr

from ..credentials import bearer, same_secret
from ..hosts import is_loopback
from ..integrations.offers import built_in_webhooks
from ..settings import Settings
from ..webhook import Webhook
from .deps import local_token_of, settings_of


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


def credentials(api: SecretStr | None, local: str | None) -> list[str]:
    """The tokens that open a guarded route: the API token, when set, and the local token."""
    return [t for t in (api.get_secret_value() if api else None, local) if t]


def carries_credential(headers: Any, api: SecretStr | None, local: str | None) -> bool:
    """Does the request's bearer token match one of the credentials? Each is compared, every time, so the
    time taken does not say which was tried."""
    offered = bearer(headers)
    return bool(sum(same_secret(offered, held) for held in credentials(api, local))) if offered else False


async def api_token(request: Request) -> None:
    """Dependency of the lookup API and the docs (async: run on the event loop, no thread-pool hop): with an
    API token set, it or the local token; without one (on loopback) open."""
    api = settings_of(request).service.api_token
    if api is not None and not carries_credential(request.headers, api, local_token_of(request)):
        raise HTTPException(401, "missing or wrong bearer token (ONCALL_MEMORY_API_TOKEN)", headers=BEARER)


CREDENTIAL = (
    "send the API token (ONCALL_MEMORY_API_TOKEN) or the local token the service keeps in its data dir "
    "(local-token; the CLI on this machine sends it) as a bearer token"
)
WRITER = f"this route writes to the memory, copies or checks it: {CREDENTIAL}"
BEARER = {"WWW-Authenticate": "Bearer"}


async def writer(request: Request) -> None:
    """Dependency of what writes to the memory, copies it or checks it (`/ingest`, `/backup`, `/verify`,
    `/feedback`): a credential on every address, loopback included."""
    if not carries_credential(request.headers, settings_of(request).service.api_token, local_token_of(request)):
        raise HTTPException(401, WRITER, headers=BEARER)


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


def proxies(settings: Settings) -> str:
    """The proxies whose forwarded headers are believed: ONCALL_MEMORY_FORWARDED_ALLOW_IPS, else Uvicorn's own
    FORWARDED_ALLOW_IPS where a deployment already set it."""
    return settings.service.forwarded_allow_ips or os.environ.get("FORWARDED_ALLOW_IPS", "")


def proxy_trust_problem(settings: Settings) -> str | None:
    """Why the auth-proxy login cannot be believed as configured: with every address trusted as a proxy, any
    client could send the header and be whoever it names."""
    if not settings.service.auth_proxy_header:
        return None
    if "*" in [p.strip() for p in proxies(settings).split(",")]:
        return (
            "ONCALL_MEMORY_AUTH_PROXY_HEADER is set while ONCALL_MEMORY_FORWARDED_ALLOW_IPS (or FORWARDED_ALLOW_IPS) "
            "trusts every address ('*'): any client could name itself as anyone. Give the proxy's own address or "
            "network (e.g. 10.0.0.5 or 10.0.0.0/24)"
        )
    return None


def exposure(settings: Settings) -> list[str]:
    """What would face the network unauthenticated: the API's routes without the API token (a pager's route
    without its secret is off there, not open)."""
    if not faces_the_network(settings) or settings.service.api_token is not None:
        return []
    routes = "/ (search page), /similar, /feedback, /stats, /metrics, /mcp, /docs, /redoc, /openapi.json"
    return [f"{routes} (set ONCALL_MEMORY_API_TOKEN)"]
