"""Reading a request body: the async part (streaming, bounded) runs on the event loop, everything
else (parsing, validating, looking up) in the plain `def` routes, on FastAPI's threadpool."""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException, Request
from pydantic import BaseModel, ValidationError

from ..backlog import validation_message


async def raw_json_body(request: Request) -> bytes:
    """The raw body of a JSON request, or a 4xx that says what is wrong (type, size)."""
    limit = request.app.state.settings.max_body_bytes
    ctype = request.headers.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise HTTPException(415, f"send Content-Type: application/json (got {ctype or 'none'})")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"body of {declared} bytes is over the {limit}-byte limit")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HTTPException(413, f"body is over the {limit}-byte limit")
    return bytes(body)


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HTTPException(400, f"body is not valid JSON: {exc}") from exc


def parse(model: type[BaseModel], data: Any) -> Any:
    """`data` as `model`, or a 422 naming each field to fix."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise HTTPException(422, f"{model.__name__}: {validation_message(exc)}") from exc
