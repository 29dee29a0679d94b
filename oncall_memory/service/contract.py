"""The API's contract as the service keeps it: one shape for every error, and each route's statuses named in
its OpenAPI entry, so a client (and the fuzzer in CI) can hold the service to what it says."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Problem(BaseModel):
    """One thing wrong with a request: where (`loc`: "body", "alert", "text"; "query", "limit"), what."""

    loc: list[str | int]
    msg: str
    type: str


class ErrorBody(BaseModel):
    """Every error the service answers: what to fix in one sentence; for a request that does not fit the
    schema, each problem found."""

    detail: str
    errors: list[Problem] | None = None


WHY = {
    400: "The request cannot be read: not JSON, a value no sender writes, or a value the memory refuses",
    401: "The credential is missing or wrong",
    403: "Sent by a page on another site, or a form that did not come from this service's page",
    404: "Not found, or the route is off until its secret is set",
    421: "The request names a host this service does not answer to (ONCALL_MEMORY_ALLOWED_HOSTS)",
    413: "The body is over the service's limit (ONCALL_MEMORY_MAX_BODY_BYTES)",
    415: "The body is not of the content type the route reads",
    422: "The request does not fit the schema: `detail` says what to fix, `errors` where",
    503: "The memory cannot answer now, or the data dir cannot be written (then with Retry-After)",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The `responses` entry documenting these error statuses, each with the one error shape."""
    return {code: {"model": ErrorBody, "description": WHY[code]} for code in codes}


# What every pager's webhook route can answer besides its 202.
WEBHOOK_ERRORS = errors(400, 401, 404, 413, 415, 422, 503)
