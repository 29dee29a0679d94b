"""The API's own docs, served by the service itself: the OpenAPI schema (with the raw-body routes' models),
Swagger UI from its PyPI package (no CDN: an air-gapped network, a strict CSP), ReDoc, and /metrics. Each
behind the same credential as the lookups."""

from __future__ import annotations

from typing import Any

import swagger_ui_bundle
from fastapi import Depends, FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response

from . import page
from .auth import api_token
from .metrics import Metrics


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema, with the models of the raw-body routes (see `body.documented_body`) in its components."""
    if app.openapi_schema is None:
        schema = app.openapi()
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for path in schema.get("paths", {}).values():
            for operation in path.values():
                components.update(operation.pop("x-components", {}))
    return app.openapi_schema or {}


DOCS_ASSETS = "/docs/assets"
DOCS_ASSET_TYPES = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css"}  # nothing else is served


def add_api_docs(app: FastAPI, metrics: Metrics) -> None:
    """/openapi.json and /docs for whoever may read the page; /redoc and /metrics behind the API token."""
    guarded = [Depends(api_token)]
    readers = [Depends(page.bearer_or_session)]

    @app.get("/openapi.json", dependencies=readers, include_in_schema=False)
    def openapi() -> JSONResponse:
        return JSONResponse(openapi_schema(app))

    @app.get("/docs", dependencies=readers, include_in_schema=False)
    def swagger() -> HTMLResponse:
        # Swagger UI from its PyPI package, served here: no CDN (an air-gapped network, a strict CSP).
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="oncall-memory",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url="/favicon.svg",
        )

    @app.get(DOCS_ASSETS + "/{name}", include_in_schema=False)
    def swagger_asset(name: str) -> Response:
        kind = DOCS_ASSET_TYPES.get(name)
        if kind is None:
            return Response(status_code=404)
        body = (swagger_ui_bundle.swagger_ui_path / name).read_bytes()
        return Response(body, media_type=kind, headers={"Cache-Control": "max-age=86400"})

    @app.get("/redoc", dependencies=guarded, include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url="/openapi.json", title="oncall-memory")

    @app.get("/metrics", dependencies=[Depends(api_token)], include_in_schema=False)
    def prometheus() -> Response:
        body, content_type = metrics.exposition()
        return Response(body, media_type=content_type)
