"""Reading a request body: the async part (streaming, bounded) runs on the event loop, everything
else (parsing, validating, looking up) in the plain `def` routes, on FastAPI's threadpool."""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException, Request
from pydantic import BaseModel, ValidationError

from ..backlog import validation_message
from .deps import settings_of

MAX_DEPTH = 32  # no pager nests deeper than a handful of levels; deeper input is an attack, not an alert


async def raw_json_body(request: Request) -> bytes:
    """The raw body of a JSON request, or a 4xx that says what is wrong (type, size)."""
    return await _raw_body(request, "application/json")


async def raw_form_body(request: Request) -> bytes:
    """The raw body of a form post (Slack's requests: the signature is over these exact bytes)."""
    return await _raw_body(request, "application/x-www-form-urlencoded")


async def _raw_body(request: Request, media_type: str) -> bytes:
    limit = settings_of(request).service.max_body_bytes
    ctype = request.headers.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != media_type:
        raise HTTPException(415, f"send Content-Type: {media_type} (got {ctype[:100] or 'none'})")
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
    """The body as JSON, or a 400 for bad syntax or nesting deeper than `MAX_DEPTH`."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HTTPException(400, f"body is not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise HTTPException(400, f"body nests deeper than {MAX_DEPTH} levels") from exc
    if _deeper_than(data, MAX_DEPTH):
        raise HTTPException(400, f"body nests deeper than {MAX_DEPTH} levels")
    return data


def _deeper_than(data: Any, limit: int) -> bool:
    # Iterative, so the check itself cannot hit the recursion limit.
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return False


def parse(model: type[BaseModel], data: Any) -> Any:
    """`data` as `model`, or a 422 naming each field to fix."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise HTTPException(422, f"{model.__name__}: {validation_message(exc)}") from exc


def documented_body(model: type[BaseModel]) -> dict[str, Any]:
    """The request body a raw-body route reads, for its OpenAPI entry (and the schema-driven fuzz test)."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    defs = schema.pop("$defs", {})
    return {
        "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
        "x-components": defs,
    }
