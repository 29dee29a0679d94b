"""What every alert was answered, and which alert families have nothing on record, for machines:
`GET /answers`, `GET /coverage` and `POST /coverage/written` (issue 84). The page shows the same
(`page.py`); the CLI's `answers` and `coverage` ask here when a service runs."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query
from pydantic import BaseModel, Field

from ..domain.blank import NOT_BLANK
from .answer_log import AnswerLog, family_rows, rows
from .auth import api_token, writer
from .contract import errors
from .deps import AnswerLogDep, OutboxDep
from .request_body import documented_body, parse, parse_json, raw_json_body

router = APIRouter(dependencies=[Depends(api_token)], tags=["answers"], responses=errors(401, 503))
DAY = 86400.0


def since_of(days: float | None) -> float | None:
    return None if days is None else time.time() - days * DAY


@router.get("/answers", responses=errors(422))
def answers(
    book: AnswerLogDep,
    outbox: OutboxDep,
    days: float | None = Query(None, gt=0, le=3650, description="only the last this many days"),
    limit: int = Query(100, ge=1, le=1000),
) -> list[dict[str, Any]]:
    """The latest alerts the service answered, newest first: when, which pager, the headline, the first
    answers with how sure each is, and each target the answer went to with its delivery's state now."""
    out = rows(book.recent(since_of(days), limit))
    states: dict[str, dict[str, str]] = {}
    for a in out:
        now = states.setdefault(a["job"], outbox.states(a["job"])) if a["posted_to"] else {}
        # A delivery the outbox has forgotten (a week after it was done) is said so, not made up.
        a["deliveries"] = {t: now.get(t, "forgotten") for t in a["posted_to"]}
    return out


@router.get("/coverage", responses=errors(422))
def coverage(
    book: AnswerLogDep, days: float = Query(30, gt=0, le=3650, description="families seen in the last this many days")
) -> list[dict[str, Any]]:
    """The alert families seen whose latest answer read "nothing close is on record": the runbooks to write."""
    return family_rows(book.uncovered(since_of(days)))


class Written(BaseModel):
    family: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)


@router.post(
    "/coverage/written",
    dependencies=[Depends(writer)],
    openapi_extra=documented_body(Written),
    responses=errors(400, 404, 413, 415, 422),
)
def written(book: AnswerLogDep, raw: bytes = Depends(raw_json_body)) -> dict[str, Any]:
    """Say a runbook or an incident for this family was written: it stays listed, marked, until its answers
    stop reading low."""
    body = parse(Written, parse_json(raw))
    if not book.mark_written(body.family):
        raise HTTPException(404, f"no alert family {body.family[:80]!r} was seen")
    return {"family": body.family, "written": True}


def uncovered_gauge(book: AnswerLog) -> int:
    return book.count_uncovered(time.time() - 30 * DAY)
