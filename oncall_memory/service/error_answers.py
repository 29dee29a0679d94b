"""How the service answers an error: FastAPI's 422 without the value it was given, every refusal's words
redacted, the domain's errors as their statuses (404, 400, 503), and a data dir that cannot take a write as
503 with Retry-After (pagers post again). Nothing answers 500 but a bug, and that says where the log is."""

from __future__ import annotations

import logging
import sqlite3

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import DiskFull, InvalidInput, NotFound, OncallMemoryError
from ..redact import redact
from . import page
from .deps import room_of
from .free_space import RETRY_AFTER, cannot_write

log = logging.getLogger(__name__)


def answer_errors(app: FastAPI) -> None:
    app.add_exception_handler(page.LoginRequired, page.login_redirect)  # type: ignore[arg-type]  # Starlette types the handler for any Exception

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own 422, less the value it was given: a query parameter is read before any redaction,
        # and `?limit=<a token>` came back verbatim. Each error keeps its type, location and message, each
        # redacted: a location holds the caller's own names (a token sent as a JSON key).
        errors = [
            {
                "loc": [redact(str(p)) if isinstance(p, str) else p for p in e["loc"]],
                "msg": redact(e["msg"]),
                "type": e["type"],
            }
            for e in exc.errors()
        ]
        said = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or e['loc'][0]}: {e['msg']}" for e in errors)
        return JSONResponse({"detail": said, "errors": jsonable_encoder(errors)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _refused(request: Request, exc: StarletteHTTPException) -> Response:
        # Every refusal's words pass redaction: some are built from what was sent (a content type, an id).
        if isinstance(exc.detail, str):
            exc.detail = redact(exc.detail)
        return await http_exception_handler(request, exc)

    @app.exception_handler(OncallMemoryError)
    async def _domain_error(request: Request, exc: OncallMemoryError) -> JSONResponse:
        if isinstance(exc, DiskFull):
            return _refused_write(request, exc)
        status = 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, InvalidInput) else 503
        return JSONResponse({"detail": redact(str(exc))}, status_code=status)

    @app.exception_handler(sqlite3.OperationalError)
    @app.exception_handler(OSError)
    async def _write_error(request: Request, exc: Exception) -> JSONResponse:
        if cannot_write(exc) is None:
            log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
            return JSONResponse({"detail": "internal error; the log says what failed"}, status_code=500)
        return _refused_write(request, exc)


def _refused_write(request: Request, exc: Exception) -> JSONResponse:
    """The data dir could not take a write: 503 with Retry-After, which pagers honour by posting again."""
    why = cannot_write(exc) or str(exc)
    room_of(request).refused(why)
    return JSONResponse(
        {"detail": f"the data dir cannot be written ({why}); nothing was kept: send again later"},
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER)},
    )
