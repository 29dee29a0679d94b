"""The Slack app's routes, `/slack/commands` and `/slack/interactions`: each request is verified against
Slack's signature before anything else is read, then handed to the app (`integrations/slack/app.py`).
Without a signing secret the routes are off (404)."""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.responses import JSONResponse

from ..integrations.slack.app import SlackApp
from .body import parse_json, raw_form_body
from .deps import SlackDep

router = APIRouter(prefix="/slack", tags=["slack"], include_in_schema=False)


def _form(raw: bytes) -> dict[str, str]:
    """A form body, each field's first value; at most 64 fields (Slack sends about 15)."""
    try:
        fields = parse_qs(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=64)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HTTPException(400, f"body is not a form Slack would send: {str(exc)[:100]}") from exc
    return {k: v[0] for k, v in fields.items()}


def _verified(request: Request, slack: SlackApp, raw: bytes) -> dict[str, str]:
    slack.verify(raw, request.headers.get("x-slack-request-timestamp"), request.headers.get("x-slack-signature"))
    return _form(raw)


@router.post("/commands")
def command(request: Request, slack: SlackDep, raw: bytes = Depends(raw_form_body)) -> JSONResponse:
    """A slash command: answered within Slack's 3 s (ephemeral), or "looking" and then on the response_url."""
    return JSONResponse(slack.command(_verified(request, slack, raw)))


@router.post("/interactions")
def interactions(request: Request, slack: SlackDep, raw: bytes = Depends(raw_form_body)) -> Response:
    """A button pressed: acknowledged at once (Slack wants 200 within 3 s); the rest on the response_url."""
    form = _verified(request, slack, raw)
    payload = parse_json(form.get("payload", "").encode())
    if not isinstance(payload, dict):
        raise HTTPException(400, "payload must be a JSON object")
    slack.interaction(payload)
    return Response(status_code=200)
