"""The search page: `/` (search), `/incidents/{id}` (one incident and its own neighbours), `/login`.

Server-rendered from Jinja2 templates with plain CSS and no JavaScript, so it works from a keyboard,
a screen reader and a locked-down browser alike. It asks the same `Memory` the API does.

Authentication is the API token's: a script sends it as a bearer token; a browser types it once into
`/login` and keeps a session cookie derived from it (HttpOnly, SameSite=Strict, so no other site can
make the browser use it; changing the token ends every session). The cookie opens only these GET
pages, never the API, so it cannot be used to post feedback or read `/similar` from another origin.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import ValidationError

from .. import payload as P
from ..alert import Alert, Filters
from ..backlog import validation_message
from ..errors import InvalidInput, OncallMemoryError
from ..incident import worked
from ..memory import Memory
from ..ranking import AGE, FIX_KINDS, Neighbour
from ..redact import already_redacted, redact_all
from ..retrieve import Lookup
from .auth import _bearer, same_secret
from .deps import memory_of, outbox_of, settings_of
from .outbox import FAILED, NEW, PENDING, SENDING

router = APIRouter(include_in_schema=False)

COOKIE = "oncall_memory_session"
SESSION_SECONDS = 12 * 3600  # one on-call shift and then some
FACTS = ("service", "env", "flavor", "tags")
LIMITS = (5, 10, 20)
MAX_FORM_BYTES = 4096
# No script runs on these pages, and nothing they link to learns what was searched (no Referer).
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


@cache
def templates() -> Environment:
    env = Environment(
        loader=PackageLoader("oncall_memory.service", "templates"),
        autoescape=select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["web_link"] = web_link
    env.filters["incident_path"] = lambda incident_id: "/incidents/" + quote(incident_id, safe="")
    return env


def web_link(url: Any) -> str | None:
    """Only http(s) links are links: a stored `javascript:` URL must never become clickable."""
    return url if isinstance(url, str) and url.lower().startswith(("https://", "http://")) else None


def render(name: str, code: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(templates().get_template(name).render(**context), status_code=code, headers=HEADERS)


@router.get("/static/page.css")
def stylesheet() -> Response:
    css = resources.files("oncall_memory.service").joinpath("static/page.css").read_bytes()
    return Response(
        css, media_type="text/css", headers={"Cache-Control": "max-age=3600", "X-Content-Type-Options": "nosniff"}
    )


# -- who may look ---------------------------------------------------------------------------------


def session_value(token: str) -> str:
    """What the cookie holds: a MAC of a fixed label under the token, never the token itself."""
    return hmac.new(token.encode(), b"oncall-memory search page session v1", hashlib.sha256).hexdigest()


class LoginRequired(Exception):
    def __init__(self, next_path: str):
        self.next_path = next_path


def page_user(request: Request) -> None:
    """The API token as a bearer token, or the session cookie; open when no token is configured (the
    service then refuses to listen beyond loopback, see `auth.exposure`)."""
    token = settings_of(request).api_token
    if token is None:
        return
    expected = token.get_secret_value()
    offered = [_bearer(request)]
    cookie = request.cookies.get(COOKIE, "")
    ok = same_secret(offered[0], expected) + same_secret(cookie, session_value(expected))
    if not ok:
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise LoginRequired(path)


def safe_next(value: str | None) -> str:
    """Where to go after logging in: a path on this service, never another site (`//evil`, `/\\evil`)."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")) or any(c in value for c in "\r\n"):
        return "/"
    return value


def login_redirect(request: Request, exc: LoginRequired) -> RedirectResponse:
    return RedirectResponse("/login?" + urlencode({"next": exc.next_path}), status_code=303, headers=HEADERS)


@router.get("/login")
def login_form(next: str = "/") -> HTMLResponse:
    return render("login.html", next=safe_next(next), error=None)


@router.post("/login")
async def login(request: Request) -> Response:
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_FORM_BYTES:
            raise HTTPException(413, f"the login form is over {MAX_FORM_BYTES} bytes")
    form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
    target = safe_next(form.get("next"))
    token = settings_of(request).api_token
    if token is None:
        return RedirectResponse(target, status_code=303, headers=HEADERS)
    if not same_secret(form.get("token", ""), token.get_secret_value()):
        return render("login.html", code=401, next=target, error="That is not the API token (ONCALL_MEMORY_API_TOKEN).")
    response = RedirectResponse(target, status_code=303, headers=HEADERS)
    response.set_cookie(
        COOKIE,
        session_value(token.get_secret_value()),
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


@router.post("/logout")
def logout() -> Response:
    response = RedirectResponse("/login", status_code=303, headers=HEADERS)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response


# -- searching ------------------------------------------------------------------------------------


@router.get("/", dependencies=[Depends(page_user)])
def search(
    request: Request,
    q: str = "",
    service: str = "",
    env: str = "",
    flavor: str = "",
    tags: str = "",
    only: list[str] = Query(default=[]),
    limit: int = 5,
    memory: Memory = Depends(memory_of),
) -> Response:
    typed = {"q": q, "service": service.strip(), "env": env.strip(), "flavor": flavor.strip(), "tags": tags.strip()}
    form = redact_all(typed)
    if form != typed:
        # A secret pasted into the form: the address bar and the history keep the redacted search instead.
        query = urlencode({**{k: v for k, v in form.items() if v}, "only": only, "limit": limit}, doseq=True)
        return RedirectResponse(f"/?{query}", status_code=303, headers=HEADERS)
    form.update({"only": [f for f in only if f in FACTS], "limit": limit if limit in LIMITS else LIMITS[0]})
    context: dict[str, Any] = {
        "form": form,
        "limits": LIMITS,
        "known": known(memory),
        "panel": panel(request, memory),
        "lookup": None,
        "error": None,
    }
    code = 200
    if q.strip():
        try:
            context["lookup"] = lookup(memory, form)
        except (ValidationError, InvalidInput) as exc:
            context["error"] = validation_message(exc) if isinstance(exc, ValidationError) else str(exc)
            code = 400
        except OncallMemoryError as exc:  # nothing ingested yet, a contract mismatch, the store down
            context["error"] = str(exc)
            code = 503
    context["results"] = results(context["lookup"])
    return render("search.html", code, **context)


def lookup(memory: Memory, form: dict[str, Any]) -> Lookup:
    """The form's facts are soft preferences; those ticked "only" are also hard filters."""
    tags = [t for t in (part.strip() for part in form["tags"].split(",")) if t]
    facts: dict[str, Any] = {
        "service": form["service"] or None,
        "env": form["env"] or None,
        "flavor": form["flavor"] or None,
    }
    with already_redacted():  # the form was redacted as it arrived
        alert = Alert(text=form["q"], component_tags=tags, **facts)
    only = set(form["only"])
    filters = Filters(
        **{k: v for k, v in facts.items() if k in only and v}, component_tags=tags if "tags" in only else []
    )
    return memory.similar(alert, filters=filters, limit=form["limit"])


def results(lookup: Lookup | None) -> list[dict[str, Any]]:
    return [result(n) for n in lookup.neighbours] if lookup else []


def result(n: Neighbour) -> dict[str, Any]:
    """One neighbour as the page shows it: fixes by what they did, then the other reasons."""
    worked_: list[str] = []
    no_effect: list[str] = []
    worse: list[str] = []
    for fix in n.fixes:
        line = fix.action + (f" ({fix.history})" if fix.history else "")
        (worked_ if worked(fix.outcome) else worse if fix.outcome == "worsened" else no_effect).append(line)
    if not n.fixes:  # a neighbour without the fix views (older payloads): the two lists it always has
        worked_, no_effect = list(n.fixes_worked), list(n.fixes_failed)
    return {
        "n": n,
        "worked": worked_,
        "no_effect": no_effect,
        "worse": worse,
        "why": n.reasons_except(AGE, *FIX_KINDS) if n.boosts else n.reasons,
    }


def known(memory: Memory) -> dict[str, list[str]]:
    """The services, envs and flavors the memory holds, offered as suggestions in the form."""
    try:
        values = memory.known_values()
    except OncallMemoryError:
        return {}
    return {field: sorted(values.get(field, ())) for field in (P.SERVICE, P.ENV, P.FLAVOR)}


def panel(request: Request, memory: Memory) -> dict[str, Any]:
    """The status panel: how much the memory holds, with which model, how fresh, and what is undelivered."""
    try:
        count: int | None = memory.stats()["count"]
    except OncallMemoryError:
        count = None
    depth = outbox_of(request).depth()
    last = memory.last_ingest
    return {
        "count": count,
        "model": memory.embedder.model,
        "last_ingest": last,
        "last_ingest_ago": ago(last.at) if last else None,
        "pending": sum(n for (_, state), n in depth.items() if state in (NEW, PENDING, SENDING)),
        "failed": sum(n for (_, state), n in depth.items() if state == FAILED),
    }


def ago(at: datetime) -> str:
    seconds = max(0.0, (datetime.now(UTC) - at).total_seconds())
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' * (n != 1)} ago"
    return "just now"


# -- one incident ---------------------------------------------------------------------------------


@router.get("/incidents/{incident_id:path}", dependencies=[Depends(page_user)])
def incident(request: Request, incident_id: str, memory: Memory = Depends(memory_of)) -> HTMLResponse:
    found = memory.incident(incident_id)
    if found is None:
        return render("missing.html", 404, incident_id=incident_id, panel=panel(request, memory))
    neighbours = memory.neighbours_of(found, limit=5)
    fixes = [
        {
            "action": f.get("action"),
            "outcome": f.get("outcome"),
            "at": f.get("at"),
            "worked": worked(f.get("outcome", "")),
        }
        for f in found.get("fixes_attempted") or []
    ]
    return render(
        "incident.html",
        incident=found,
        fixes=fixes,
        results=results(neighbours),
        lookup=neighbours,
        panel=panel(request, memory),
    )
