"""The MCP server over streamable HTTP at `/mcp`, behind the service's API token.

The MCP app is built when the service starts (it needs the open memory), so the route holds a small
ASGI endpoint that checks the token and hands the request on.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import Any

from starlette.types import Receive, Scope, Send

from ..memory import Memory
from ..settings import Settings
from .auth import same_secret


@asynccontextmanager
async def mcp_app(memory: Memory):
    """Yield the MCP server's ASGI app while its session manager runs."""
    from mcp.server.transport_security import TransportSecuritySettings

    from ..mcp_server import build_server

    server = build_server(memory)
    # Host checks against DNS rebinding are for servers without authentication; this one needs the token.
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    async with server.session_manager.run():
        yield app


class McpEndpoint:
    """ASGI: the API token (when set), then the MCP app the running service holds in `app.state.mcp`."""

    def __init__(self, settings: Settings):
        self._settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = self._settings.api_token
        if token is not None:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            scheme, _, value = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not same_secret(value.strip(), token.get_secret_value()):
                await _json(send, 401, {"detail": "missing or wrong bearer token (ONCALL_MEMORY_API_TOKEN)"})
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
