"""The lookup as an API, and the probes: /similar, /healthz, /readyz."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, TypeAdapter

from .. import local_token
from ..answer.ranking import Neighbour
from ..answer.render import terminal
from ..answer.retrieve import MAX_LIMIT, Lookup
from ..domain.alert import Alert, Filters
from ..domain.blank import NOT_BLANK, NonBlank
from ..local_token import MAX_CHALLENGE
from ..redact import redact
from ..store.readiness import Readiness
from .auth import api_token, writer
from .contract import errors
from .deps import DispatcherDep, MemoryDep, OutboxDep, PagersDep, RoomDep, SettingsDep, local_token_of
from .outbox import Outbox
from .request_body import documented_body, parse, parse_json, raw_json_body

# A response header may carry printable ASCII only (h11 drops the connection on a control character): what
# comes from input is sent with everything else percent-encoded, as X-Lookup-Text always was.
_HEADER_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%") + " "


def header_value(text: str) -> str:
    """`text` as a header value: printable ASCII kept, anything else (controls, DEL, non-ASCII, `%`)
    percent-encoded, no white space at either end."""
    return quote(text.strip(), safe=_HEADER_SAFE).strip()


MAX_TEXT_HEADER = 16_384  # bytes of the percent-encoded alert text sent back; http.client reads lines of 64 Ki

router = APIRouter(dependencies=[Depends(api_token)], tags=["lookup"], responses=errors(401, 503))
probes = APIRouter(tags=["probes"])
LIMIT = "how many past incidents, most alike first"


def _whole(value: Any) -> Any:
    """JSON's integers as JSON Schema counts them: 15 and 15.0, never `true` or "15"."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("give a whole number")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("give a whole number")
    return int(value)


WholeNumber = Annotated[int, BeforeValidator(_whole)]


class SimilarRequest(BaseModel):
    """POST /similar: an alert (facts are soft preferences) plus optional hard filters."""

    model_config = ConfigDict(extra="forbid")

    alert: Alert
    filters: Filters | None = None
    limit: WholeNumber = Field(5, ge=1, le=MAX_LIMIT, description=LIMIT)
    mode: Literal["hybrid", "dense", "lexical"] = "hybrid"
    rank: StrictBool = True


_NEIGHBOURS = TypeAdapter(list[Neighbour])


def neighbours_json(lookup: Lookup, headers: dict[str, str] | None = None) -> Response:
    """The neighbours' list as the answer's body, written by pydantic's own encoder in one pass (0.02 ms
    for five; their dicts and then `json.dumps` took 0.09 for the same bytes on the bench's answers; a
    number may be spelt otherwise, `1e-6` for `1e-06`, and a NaN is `null` where `json.dumps` refused it)."""
    return Response(_NEIGHBOURS.dump_json(lookup.neighbours), media_type="application/json", headers=headers)


# The answer is built as JSON here (as `POST /similar` does): FastAPI's own response validation and
# encoding of the neighbours took about 1 ms of a lookup. `response_model` keeps the documented shape.
def given_once(request: Request) -> None:
    """A parameter that takes one value, given twice (`?env=a&env=b`), is refused: which one was meant?"""
    for name in {k for k, _ in request.query_params.multi_items() if k != "tag"}:
        if len(request.query_params.getlist(name)) > 1:
            raise RequestValidationError([{"loc": ("query", name), "msg": "give it once", "type": "repeated"}])


@router.get("/similar", response_model=list[dict], responses=errors(400, 422), dependencies=[Depends(given_once)])
def similar_get(
    memory: MemoryDep,
    text: str = Query(min_length=1, pattern=NOT_BLANK, description="the alert's text"),
    # A filter given empty (`?env=`) is a mistake, not "any": it would match nothing.
    service: str | None = Query(None, min_length=1, pattern=NOT_BLANK),
    env: str | None = Query(None, min_length=1, pattern=NOT_BLANK),
    flavor: str | None = Query(None, min_length=1, pattern=NOT_BLANK),
    tag: list[NonBlank] = Query(default=[]),
    status: str | None = Query(None, min_length=1, pattern=NOT_BLANK),
    limit: int = Query(5, ge=1, le=MAX_LIMIT, description=LIMIT),
) -> Response:
    alert = parse(Alert, {"text": text})
    filters = parse(
        Filters, {"service": service, "env": env, "flavor": flavor, "component_tags": tag, "status": status}
    )
    return neighbours_json(memory.similar(alert, filters=filters, limit=limit))


# Its 200 is documented by hand: the body is the neighbours' list as JSON, or with format=text the answer
# as the CLI prints it.
ANSWERED: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The nearest past incidents, most alike first",
        "content": {
            "application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
            "text/plain": {"schema": {"type": "string"}},
        },
    }
}


@router.post(
    "/similar",
    openapi_extra=documented_body(SimilarRequest),
    responses={**ANSWERED, **errors(400, 413, 415, 422)},
    response_class=Response,
)
def similar_post(
    memory: MemoryDep,
    raw: bytes = Depends(raw_json_body),
    format: Literal["json", "text"] = Query(
        "json", description="json: the list of neighbours; text: the answer as `oncall-memory similar` prints it"
    ),
    colour: bool = Query(False, description="text: with a terminal's colours (ANSI)"),
    width: int | None = Query(None, ge=20, le=1000, description="text: lines wrapped to this many columns"),
) -> Response:
    req = parse(SimilarRequest, parse_json(raw))
    started = time.perf_counter()
    lookup = memory.similar(req.alert, filters=req.filters, limit=req.limit, mode=req.mode, rank=req.rank)
    elapsed = time.perf_counter() - started
    # How the lookup ran, for a client that prints it (the CLI); the body stays the list of neighbours.
    headers: dict[str, str] = {"X-Lookup-Mode": lookup.mode, "X-Lookup-Confidence": lookup.confidence}
    # Each header that grows with the alert is bounded as X-Lookup-Text is: a client reads header lines of
    # at most 64 KiB (Python's http.client), and a longer one left it with no answer at all.
    if lookup.signature_key and len(signature := header_value(lookup.signature_key)) <= MAX_TEXT_HEADER:
        headers["X-Lookup-Signature"] = signature
    if lookup.degraded:
        headers["X-Lookup-Degraded"] = header_value(lookup.degraded)[:MAX_TEXT_HEADER]
    if format == "text":
        # Rendered here by the CLI's own renderer, from the lookup itself: the CLI through a service needs no
        # model of its own (half its start-up) and prints what it would print standalone, to the letter.
        return PlainTextResponse(terminal(lookup, req.alert.text, elapsed, colour=colour, width=width), headers=headers)
    # The alert's text as it entered (redacted), for a client that prints it from the JSON: it then has no
    # need to load the secret catalogue itself. A long text is left out; such a client redacts it.
    if len(echo := quote(req.alert.text, safe="/:,.;=()[]-_")) <= MAX_TEXT_HEADER:
        headers["X-Lookup-Text"] = echo
    return neighbours_json(lookup, headers)


@router.get("/stats")
def stats(memory: MemoryDep) -> dict:
    return memory.stats()


INCIDENT_ID = r"^[A-Za-z0-9][\w.:#-]{0,199}$"  # a pager's own incident id, as its webhook's job keys carry it


class FeedbackRequest(BaseModel):
    """POST /feedback: a responder's verdict on a suggestion, for the alert it was made for (the alert
    itself, or the incident it opened on a pager whose webhook brought it here: a PagerDuty incident's id)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"required": ["alert"], "properties": {"alert": {"type": "object"}}},
                {"required": ["alert_incident"], "properties": {"alert_incident": {"type": "string"}}},
            ]
        },
    )

    alert: Alert | None = None
    alert_incident: str | None = Field(default=None, pattern=INCIDENT_ID)
    suggested: str = Field(min_length=1, max_length=200)
    verdict: Literal["helped", "not related", "not-related"]
    who: str = Field(default="api", max_length=200)


@router.post(
    "/feedback",
    openapi_extra=documented_body(FeedbackRequest),
    responses=errors(400, 404, 413, 415, 422),
    dependencies=[Depends(writer)],  # a verdict moves the ranking: a credential even on loopback
)
def feedback(
    memory: MemoryDep,
    outbox: OutboxDep,
    pagers: PagersDep,
    dispatcher: DispatcherDep,
    raw: bytes = Depends(raw_json_body),
) -> dict:
    req = parse(FeedbackRequest, parse_json(raw))
    alert = req.alert
    if alert is None and req.alert_incident:
        # The job a pager's webhook made for that incident holds its alert: `<pager>:<incident id>`.
        for pager in pagers:
            if (job := outbox.job_of(key := f"{pager}:{req.alert_incident}")) is not None:
                items = dispatcher.read(job).items  # a large group may not be read yet
                alert = next((i.alert for i in items if i.key == key), items[0].alert if items else None)
                break
        else:
            raise HTTPException(404, f"no alert for incident {req.alert_incident} came through this service")
    if alert is None:
        raise HTTPException(
            422, "give the alert (its text) or alert_incident (the id of an incident a pager sent this service)"
        )
    verdict = "not related" if req.verdict == "not-related" else req.verdict
    recorded = memory.record_feedback(alert, req.suggested, verdict, who=req.who, ref="api")
    return {"recorded": recorded, "suggested": redact(req.suggested), "verdict": verdict}  # as it was stored


class Proof(BaseModel):
    proof: str


@probes.get("/proof", response_model=Proof, responses=errors(422, 503))
def proof(
    request: Request,
    challenge: str = Query(min_length=16, max_length=MAX_CHALLENGE, pattern=r"^[0-9a-f]+$"),
) -> dict[str, str]:
    """The answer to a challenge only the holder of this service's local token can give (`local_token.py`):
    the CLI asks before it sends the token or an alert to the address `service.json` names."""
    token = local_token_of(request)
    if token is None:
        raise HTTPException(503, "the service is starting")
    return {"proof": local_token.proof(token, challenge)}


@probes.get("/healthz")
def healthz() -> dict:
    return {"status": "ok"}


class Ready(BaseModel):
    ready: bool
    detail: str
    degraded: str | None = None


@probes.get("/readyz", response_model=Ready, responses={503: {"model": Ready, "description": "Cannot answer now"}})
def readyz(memory: MemoryDep, outbox: OutboxDep, settings: SettingsDep, room: RoomDep) -> JSONResponse:
    state = memory.ready()
    if state.ready and (full := room.problem()):  # lookups still answer; webhooks would be refused
        state = Readiness(False, full)
    body = {"ready": state.ready, "detail": state.detail}
    degraded = [state.degraded] if state.degraded else []
    degraded += failing_targets(outbox, settings.deliveries.degraded_after)
    if degraded:
        body["degraded"] = "; ".join(degraded)
    return JSONResponse(body, status_code=200 if state.ready else 503)


def failing_targets(outbox: Outbox, after: float) -> list[str]:
    """Targets failing for longer than `after` seconds, in words."""
    now = time.time()
    return [
        f"{h.name} failing for {now - h.failing_since:.0f}s ({h.last_error}); {h.waiting} deliveries waiting"
        for h in outbox.health()
        if h.failing_since is not None and now - h.failing_since > after
    ]
