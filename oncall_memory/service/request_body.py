"""Reading a request body: the async part (streaming, bounded) runs on the event loop, everything
else (parsing, validating, looking up) in the plain `def` routes, on FastAPI's threadpool."""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import HTTPException, Request
from pydantic import BaseModel, ValidationError

from ..domain.rejected import validation_message
from .deps import settings_of

MAX_DEPTH = 32  # no pager nests deeper than a handful of levels; deeper input is an attack, not an alert
MAX_NUMBER_CHARS = 64  # no pager field is a number longer than this; Python would parse 4,300 digits first
_SURROGATE = re.compile("[\ud800-\udfff]")


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


class _Refused(ValueError):
    """A JSON value no pager sends, refused while parsing (before Python converts it)."""


def _number(text: str) -> int | float:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Refused(f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
    return float(text) if any(c in text for c in ".eE") else int(text)


def _constant(name: str) -> float:
    raise _Refused(f"{name} is not JSON")


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or a 400 for bad syntax, nesting deeper than `MAX_DEPTH`, a number longer than
    `MAX_NUMBER_CHARS`, NaN/Infinity, or a lone surrogate escape (`"\\ud800"`: no UTF-8 can hold it, so it
    would fail later, wherever the text is first encoded)."""
    try:
        data = json.loads(raw, parse_int=_number, parse_float=_number, parse_constant=_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HTTPException(400, f"body is not valid JSON: {exc}") from exc
    except _Refused as exc:
        raise HTTPException(400, f"body is refused: {exc}") from exc
    except RecursionError as exc:
        raise HTTPException(400, f"body nests deeper than {MAX_DEPTH} levels") from exc
    problem = _too_deep(data, MAX_DEPTH)
    if problem is None and _SURROGATE_ESCAPE.search(raw):
        problem = _lone_surrogate(data)
    if problem:
        raise HTTPException(400, problem)
    return data


# A lone surrogate can only come from a `\ud800`-style escape: UTF-8 cannot hold one, so a body without such
# an escape has none, and its strings need not be read one by one (a storm's post holds 300,000).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _too_deep(data: Any, limit: int) -> str | None:
    """Whether parsed JSON nests deeper than `limit`. Iterative, so the check itself cannot hit the
    recursion limit; linear in the body (strings are not visited)."""
    # Level by level: each level's containers in one list, so a storm's 30,000 objects cost a type check
    # each and no generator of their own (10,000 alerts: 43 ms read one by one, 19 ms level by level).
    level = [data] if type(data) in _CONTAINERS else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return f"body nests deeper than {limit} levels"
        below = []
        for value in level:
            for child in value.values() if type(value) is dict else value:
                if type(child) in _CONTAINERS:
                    below.append(child)
        level = below
    return None


_CONTAINERS = (dict, list)  # what `json.loads` makes of objects and arrays, exactly (no subclasses)


def _lone_surrogate(data: Any) -> str | None:
    """Whether a key or string of parsed JSON holds a lone surrogate."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if not value.isascii() and _SURROGATE.search(value):
                return "body has a lone surrogate escape (\\ud800-\\udfff without its pair): send valid UTF-16 pairs"
        elif isinstance(value, dict):
            stack.extend(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None


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
