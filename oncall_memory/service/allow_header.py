"""Which methods a path takes, answered truthfully: Starlette answers a wrong method with the first matching
route's methods alone (`OPTIONS /similar` said `Allow: GET`, though `POST /similar` is a route too). This
middleware answers `OPTIONS` with 204 and every method the path's routes take, and puts the same list in
any 405's `Allow`. Other requests pass untouched (nothing is matched twice on the lookup's path)."""

from __future__ import annotations

from typing import Any

from starlette.routing import Match

from .route_list import http_routes

Scope = dict[str, Any]


class Methods:
    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and (allowed := _allowed(scope)):
            await send({"type": "http.response.start", "status": 204, "headers": [(b"allow", allowed)]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_allowing(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] == 405:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"allow"]
                message = {**message, "headers": [*headers, (b"allow", _allowed(scope))]}
            await send(message)

        await self.app(scope, receive, send_allowing)


def _allowed(scope: Scope) -> bytes:
    """Every method of every route whose path matches (HEAD with GET, as Starlette serves it), and OPTIONS;
    empty when no route's path does."""
    methods: set[str] = set()
    app = scope.get("app")
    for route in http_routes(app) if app is not None else []:
        if route.methods:
            match, _ = route.matches({**scope, "method": next(iter(route.methods))})
            if match == Match.FULL:
                methods |= route.methods
    return ", ".join(sorted(methods | {"OPTIONS"})).encode() if methods else b""
