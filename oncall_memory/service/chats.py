"""The chat apps' routes, `/<name>/commands` and `/<name>/interactions` for each app an integration offers
(`chat.ChatApp`): each request is verified by the app before anything else is read, then handed to it.
While the app is off (its setting unset) the routes answer 404 naming what to set."""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response
from fastapi.responses import JSONResponse

from ..chat import ChatApp
from .deps import chat_provider
from .request_body import parse_json, raw_form_body

MAX_FIELDS = 64  # a chat's form has about 15


def _form(raw: bytes, title: str) -> dict[str, str]:
    """A form body, each field's first value."""
    try:
        fields = parse_qs(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HTTPException(400, f"body is not a form {title} would send: {str(exc)[:100]}") from exc
    return {k: v[0] for k, v in fields.items()}


def mount(app: FastAPI, chat: type[ChatApp]) -> None:
    """Add `chat`'s two routes to `app` (left out of /docs: only the chat calls them)."""
    router = APIRouter(prefix=f"/{chat.name}", tags=[chat.name], include_in_schema=False)
    Chat = Depends(chat_provider(chat))  # noqa: N806 - a dependency, named as the type it gives

    def verified(request: Request, built: ChatApp, raw: bytes) -> dict[str, str]:
        built.verify(raw, request.headers)
        return _form(raw, chat.title)

    @router.post("/commands")
    def command(request: Request, built: ChatApp = Chat, raw: bytes = Depends(raw_form_body)) -> JSONResponse:
        """A slash command: answered within the chat's deadline, or "looking" and then later."""
        return JSONResponse(built.command(verified(request, built, raw)))

    @router.post("/interactions")
    def interactions(request: Request, built: ChatApp = Chat, raw: bytes = Depends(raw_form_body)) -> Response:
        """A button pressed: acknowledged at once; the rest after."""
        form = verified(request, built, raw)
        payload = parse_json(form.get("payload", "").encode())
        if not isinstance(payload, dict):
            raise HTTPException(400, "payload must be a JSON object")
        built.interaction(payload)
        return Response(status_code=200)

    app.include_router(router)
