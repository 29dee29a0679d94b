"""The page's view of what the service answered (issue 84): `/alerts` lists the alert families with nothing
on record (the runbooks to write) and the latest alerts with their first answers and where each was
posted; the search page shows the latest few under its box. Guarded as the search page is."""

from __future__ import annotations

import time

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from .answer_log import rows
from .deps import answer_log_of, outbox_of
from .page_login import logged_in, page_user
from .page_view import render
from .sessions import Person, Session

router = APIRouter(include_in_schema=False)
DAY = 86400.0
LATEST_ON_THE_SEARCH_PAGE = 5


def latest(request: Request, limit: int) -> list[dict]:
    """The latest answers, each with its deliveries' states now (as `/answers` gives them)."""
    out = rows(answer_log_of(request).recent(limit=limit))
    outbox = outbox_of(request)
    for a in out:
        now = outbox.states(a["job"]) if a["posted_to"] else {}
        a["deliveries"] = {t: now.get(t, "forgotten") for t in a["posted_to"]}
    return out


@router.get("/alerts")
def alerts(request: Request, session: Session | Person | None = Depends(page_user)) -> HTMLResponse:
    families = answer_log_of(request).uncovered(time.time() - 30 * DAY)
    return render("alerts.html", families=families, answers=latest(request, 50), logged_in=logged_in(session))
