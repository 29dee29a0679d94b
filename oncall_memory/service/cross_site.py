"""Only the team reaches the memory, whatever page is open in their browser.

Two checks run before any route (`CrossSiteGuard`, an ASGI middleware):

- **Host.** A web page can rebind its own DNS name to 127.0.0.1; the browser then sends the page's own
  name as `Host`, and everything the service answers on loopback would be the page's to read. A request
  must name a host the service answers to (`allowed_hosts`): this machine's own names, plus
  ONCALL_MEMORY_ALLOWED_HOSTS. The probes answer any name (a cluster probes by the pod's address).
- **Where a request that changes something comes from.** A browser says so: `Sec-Fetch-Site` (every current
  browser) or, before it, `Origin`. A state-changing request a page on another site sent (a form, a
  `fetch`) is refused, on every route: webhooks and programs send neither header.

Starlette's `TrustedHostMiddleware` checks the first, but reads `[::1]:8080` as the host `[` (it splits on the
first colon) and answers with a bare 400; this one reads IPv6 hosts and says what to set.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from ..hosts import is_loopback
from ..settings import Settings

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
PROBES = frozenset({"/healthz", "/readyz"})  # they say nothing about the incidents
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SAME = frozenset({"same-origin", "none"})  # `none`: the person typed the address, or a bookmark


def allowed_hosts(settings: Settings) -> list[str] | None:
    """The host names (lower case; `*.example.com` for a domain's names) a request may name, or None for
    any: on a service that faces the network with no list given (every route there needs the API token),
    or where the list holds `*`."""
    given = [h.strip().lower().rstrip(".") for h in settings.service.allowed_hosts if h.strip()]
    if "*" in given:
        return None
    bound = settings.service.host.strip("[]").lower()
    if not is_loopback(bound) and not given:
        return None
    own = [bound] if bound not in ("", "0.0.0.0", "::") else []
    return list(dict.fromkeys([*LOOPBACK_NAMES, *own, *given]))


def host_name(value: str) -> str:
    """The name in a `Host` header (or an origin's netloc), without its port, lower case: `[::1]:8080` is
    `::1`, `Example.com.:80` is `example.com`."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else ""
    return value.rsplit(":", 1)[0].rstrip(".") if value.count(":") == 1 else value.rstrip(".")


def names_allowed(host: str, allowed: Sequence[str] | None) -> bool:
    if allowed is None:
        return True
    name = host_name(host)
    if not name:
        return False
    return any(name == a or (a.startswith("*.") and name.endswith(a[1:])) for a in allowed)


def _netloc(value: str, scheme: str) -> str:
    """`host:port` with the scheme's default port spelt out, for comparing an origin with a `Host`."""
    value = value.strip().lower()
    if value.endswith("]") or value.count(":") == 0:
        return f"{value}:{443 if scheme == 'https' else 80}"
    return value


def cross_site(method: str, headers: dict[str, str]) -> bool:
    """Did a page on another site send this request that changes something? (None of a program's.)"""
    if method in SAFE_METHODS:
        return False
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site.strip().lower() not in SAME
    origin = headers.get("origin")
    if origin is None:
        return False
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return True  # "null": a sandboxed frame, a file, a redirect across sites
    host = headers.get("host", "")
    return _netloc(parts.netloc, parts.scheme) != _netloc(host, parts.scheme)


class CrossSiteGuard:
    """ASGI middleware: a request naming a host the service does not answer to gets 421; a state-changing
    request from another site's page gets 403. Nothing else is touched."""

    def __init__(self, app: Any, allowed: Sequence[str] | None):
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        method = scope.get("method", "GET")
        if scope.get("path") not in PROBES and not names_allowed(headers.get("host", ""), self.allowed):
            # The host is not repeated: whatever a page named is its own business.
            await _refuse(
                send,
                421,
                "this service does not answer to the host this request names: reach it by a name it serves, "
                "or add that name to ONCALL_MEMORY_ALLOWED_HOSTS",
            )
            return
        if cross_site(method, headers):
            await _refuse(
                send,
                403,
                "a page on another site cannot change the memory: use the service's own page, or a program "
                "(the CLI, a webhook), which sends no Origin",
            )
            return
        await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def mcp_transport_security(allowed: Sequence[str] | None) -> dict[str, Any]:
    """The MCP library's own DNS-rebinding check, over the same names (its `TransportSecuritySettings`'s
    fields): on for exact names; off where the list is any host or names a domain's hosts (`*.x`), which
    the library cannot say. `CrossSiteGuard` has checked those before the library sees the request."""
    if allowed is None or any(a.startswith("*") for a in allowed):
        return {"enable_dns_rebinding_protection": False}
    hosts: list[str] = []
    origins: list[str] = []
    for name in allowed:
        spelt = f"[{name}]" if ":" in name else name
        hosts += [spelt, f"{spelt}:*"]
        origins += [f"{scheme}://{spelt}{port}" for scheme in ("http", "https") for port in ("", ":*")]
    return {"enable_dns_rebinding_protection": True, "allowed_hosts": hosts, "allowed_origins": origins}
