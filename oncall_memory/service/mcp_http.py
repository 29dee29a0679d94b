"""The MCP server over HTTP, behind a credential on every address: streamable HTTP at `/mcp`, and the older
HTTP+SSE transport at `/mcp/sse` (its messages posted to `/mcp/messages/`) for agents that speak only that
(HolmesGPT's remote MCP servers, as documented).

An agent's tools record verdicts and post notes, so the door needs the API token or the local token even on
loopback (an agent is a program: it can be given one; `oncall-memory mcp` on this machine reads the local
token itself). The MCP library's own DNS-rebinding check runs too, over the names the service answers to.

The MCP apps are built when the service starts (they need the open memory), so the routes hold a small
ASGI endpoint that checks the token and hands the request on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import asynccontextmanager
from typing import Any

from starlette.types import Receive, Scope, Send

from ..live import LiveIncidents
from ..memory import Memory
from ..settings import Settings
from .auth import CREDENTIAL, carries_credential
from .cross_site import mcp_transport_security

PATH = "/mcp"
SSE_PATH = "/mcp/sse"
MESSAGES_PATH = "/mcp/messages/"


@asynccontextmanager
async def mcp_app(memory: Memory, live: LiveIncidents | None = None, hosts: Sequence[str] | None = None):
    """Yield the MCP server's ASGI app (both transports) while its session manager runs (`live`: a pager's
    live incidents, for the tools that read one and post a note; `hosts`: the names the service answers to,
    None for any, as `cross_site.allowed_hosts` gives them)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from ..mcp.server import build_server

    server = build_server(memory, live=live)
    checked = TransportSecuritySettings(**mcp_transport_security(hosts))
    streamable = server.streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True, transport_security=checked
    )
    sse = server.sse_app(sse_path=SSE_PATH, message_path=MESSAGES_PATH, transport_security=checked)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        await (sse if path == SSE_PATH or path.startswith(MESSAGES_PATH) else streamable)(scope, receive, send)

    async with server.session_manager.run():
        yield app


class McpEndpoint:
    """ASGI: the API token or the local token, then the MCP app the running service holds in `app.state.mcp`."""

    def __init__(self, settings: Settings):
        self._settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        local = getattr(scope["app"].state, "local_token", None)
        if not carries_credential(headers, self._settings.service.api_token, local):
            await _json(send, 401, {"detail": f"the agents' door records verdicts and posts notes: {CREDENTIAL}"})
            return
        app: Any = getattr(scope["app"].state, "mcp", None)
        if app is None:
            await _json(send, 503, {"detail": "the MCP server is not running"})
            return
        await app(scope, receive, send)


async def _json(send: Send, status: int, body: dict) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                (b"www-authenticate", b"Bearer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
