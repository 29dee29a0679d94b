"""The search page: `/` (search), `/incidents/{id}` (one incident and its own neighbours), `/login`,
`/logout`, and `POST /page/feedback` (a "helped" / "not related" button on a result).

Server-rendered from Jinja2 templates with plain CSS, phone first. One small same-origin script
(`/static/page.js`, allowed by the CSP and nothing else) makes Enter submit the alert box; without it
everything works, from a keyboard, a screen reader and a locked-down browser alike. It asks the same
`Memory` the API does.

Who may look: a script sends the API token as a bearer token; a person logs in at `/login` with their own
account (`accounts.py`, `oncall-memory user add`) or the API token, or is vouched for by a trusted
authenticating proxy (`proxy_person`). A login gets a server-side session (`sessions.py`: a random id,
ended by logging out or a new token or password; login attempts throttled per client). The cookie is
HttpOnly, SameSite=Strict and Secure when the original request was HTTPS (behind a TLS proxy: uvicorn's
proxy headers, from FORWARDED_ALLOW_IPS). It opens only these pages, never the API. The one form that changes something (feedback) carries the
session's CSRF token and must come from this origin.

The routes are here; who may look is `page_login.py`, and what a page shows is `page_view.py`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from ..answer.render import NOTHING_CLOSE, WEAK_FIX
from ..answer.retrieve import Lookup
from ..credentials import same_secret
from ..domain.alert import Alert, Filters
from ..domain.incident import worked
from ..domain.rejected import validation_message
from ..errors import InvalidInput, OncallMemoryError
from ..memory import Memory
from ..redact import already_redacted, redact, redact_all
from .deps import accounts_of, attempts_of, memory_provider, sessions_of, settings_of
from .page_answers import LATEST_ON_THE_SEARCH_PAGE, latest
from .page_login import (  # noqa: F401 - `app.py` mounts `LoginRequired` and `login_redirect` from here
    COOKIE,
    LoginRequired,
    bearer_or_session,
    csrf_token,
    logged_in,
    login_redirect,
    page_user,
    proxy_person,
    safe_next,
)
from .page_view import HEADERS, clip_said, derive_facts, known, panel, render, results, typo_hints
from .sessions import Person, Session

router = APIRouter(include_in_schema=False)

FACTS = ("service", "env", "flavor", "tags")
LIMITS = (5, 10, 20)
SINCE = {"": "any time", "30d": "last 30 days", "182d": "last 6 months", "365d": "last year"}
MAX_FORM_BYTES = 4096
MAX_FEEDBACK_BYTES = 32_768  # the feedback form carries the alert text it is about


def _static(name: str, media_type: str) -> Response:
    body = resources.files("oncall_memory.service").joinpath(f"static/{name}").read_bytes()
    return Response(
        body, media_type=media_type, headers={"Cache-Control": "max-age=3600", "X-Content-Type-Options": "nosniff"}
    )


@router.get("/static/page.css")
def stylesheet() -> Response:
    return _static("page.css", "text/css")


@router.get("/static/page.js")
def script() -> Response:
    return _static("page.js", "text/javascript")


@router.get("/favicon.ico", include_in_schema=False)
@router.get("/favicon.svg", include_in_schema=False)
def favicon() -> Response:
    # Browsers ask for /favicon.ico whatever the page says; an SVG answers both (every current browser
    # draws one), so there is one icon to keep.
    return _static("favicon.svg", "image/svg+xml")


async def small_form(request: Request) -> dict[str, str]:
    """A form post of at most `MAX_FORM_BYTES` (the login form), read before the route runs."""
    return await _form(request, MAX_FORM_BYTES)


async def feedback_form(request: Request) -> dict[str, str]:
    return await _form(request, MAX_FEEDBACK_BYTES)


async def _form(request: Request, limit: int) -> dict[str, str]:
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise HTTPException(413, f"the form is over {limit} bytes")
    return {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace"), max_num_fields=20).items()}


@router.get("/login")
def login_form(request: Request, next: str = "/") -> HTMLResponse:
    return _login_page(request, 200, safe_next(next), None)


def _login_page(request: Request, code: int, target: str, error: str | None) -> HTMLResponse:
    return render("login.html", code=code, next=target, error=error, accounts=accounts_of(request).any())


@router.post("/login")
def login(request: Request, form: dict[str, str] = Depends(small_form)) -> Response:
    """A person's name and password, or no name and the API token. A plain `def`: checking a password is
    slow on purpose (argon2), so it runs on the thread pool, never on the event loop."""
    target = safe_next(form.get("next"))
    token = settings_of(request).service.api_token
    accounts = accounts_of(request)
    if token is None and not accounts.any():
        return RedirectResponse(target, status_code=303, headers=HEADERS)
    client = request.client.host if request.client else "?"
    wait = attempts_of(request).wait(client)
    if wait:
        page = _login_page(request, 429, target, f"Too many attempts: try again in {wait:.0f} s.")
        page.headers["Retry-After"] = str(max(1, round(wait)))
        return page
    name, secret = form.get("name", "").strip(), form.get("password") or form.get("token", "")
    if name:
        person = accounts.check(name, secret)
        key = None if person is None else accounts.fingerprint(person)
        refusal = "That name and password do not match an account here."
    else:
        person, key = None, None
        if token is not None and same_secret(secret, token.get_secret_value()):
            key = token.get_secret_value()
        refusal = "That is not the API token (ONCALL_MEMORY_API_TOKEN)."
        if token is None:
            refusal = "Give your name and password: this service has no API token to log in with."
    if key is None:
        attempts_of(request).failed(client)
        return _login_page(request, 401, target, refusal)
    session = sessions_of(request).start(key, person)
    response = RedirectResponse(target, status_code=303, headers=HEADERS)
    response.set_cookie(
        COOKIE,
        session.id,
        max_age=int(sessions_of(request).lifetime),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


@router.post("/logout")
def logout(request: Request) -> Response:
    sessions_of(request).end(request.cookies.get(COOKIE, ""))  # the cookie is worthless from now on
    response = RedirectResponse("/login", status_code=303, headers=HEADERS)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response


# -- searching ------------------------------------------------------------------------------------


@router.get("/")
def search(
    request: Request,
    q: str = "",
    service: str = "",
    env: str = "",
    flavor: str = "",
    tags: str = "",
    only: list[str] = Query(default=[]),
    limit: int = 5,
    since: str = "",
    said: str = "",
    session: Session | Person | None = Depends(page_user),
    memory: Memory = Depends(memory_provider),
) -> Response:
    typed = {"q": q, "service": service.strip(), "env": env.strip(), "flavor": flavor.strip(), "tags": tags.strip()}
    form = redact_all(typed)
    if form != typed:
        # A secret pasted into the form: the address bar and the history keep the redacted search instead.
        query = urlencode(
            {**{k: v for k, v in form.items() if v}, "only": only, "limit": limit, "since": since}, doseq=True
        )
        return RedirectResponse(f"/?{query}", status_code=303, headers=HEADERS)
    form.update(
        {
            "only": [f for f in only if f in FACTS],
            "limit": limit if limit in LIMITS else LIMITS[0],
            "since": since if since in SINCE else "",
        }
    )
    known_values = known(memory)
    derived = derive_facts(form, known_values, settings_of(request).service.label_facts)
    context: dict[str, Any] = {
        "form": form,
        "derived": derived,
        "limits": LIMITS,
        "since_choices": SINCE,
        "known": known_values,
        "hints": typo_hints(form, known_values),
        "panel": panel(request, memory),
        "lookup": None,
        "error": None,
        "said": clip_said(said),
        "csrf": csrf_token(request, session),
        "back": request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        "nothing_close": NOTHING_CLOSE,
        "weak_fix": WEAK_FIX,
        "logged_in": logged_in(session),
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
    context["recent"] = [] if q.strip() else latest(request, LATEST_ON_THE_SEARCH_PAGE)
    return render("search.html", code, **context)


def lookup(memory: Memory, form: dict[str, Any]) -> Lookup:
    """The form's facts are soft preferences; those ticked "only" are also hard filters, and so is the
    time chosen."""
    tags = [t for t in (part.strip() for part in form["tags"].split(",")) if t]
    facts: dict[str, Any] = {
        "service": form["service"] or None,
        "env": form["env"] or None,
        "flavor": form["flavor"] or None,
    }
    with already_redacted():  # the form was redacted as it arrived
        alert = Alert(text=form["q"], component_tags=tags, **facts)
    only = set(form["only"])
    since = datetime.now(UTC) - timedelta(days=int(form["since"][:-1])) if form["since"] else None
    filters = Filters(
        **{k: v for k, v in facts.items() if k in only and v},
        component_tags=tags if "tags" in only else [],
        since=since,
    )
    return memory.similar(alert, filters=filters, limit=form["limit"])


# -- feedback from the page -----------------------------------------------------------------------


@router.post("/page/feedback")
def page_feedback(
    request: Request,
    form: dict[str, str] = Depends(feedback_form),
    session: Session | Person | None = Depends(page_user),
    memory: Memory = Depends(memory_provider),
) -> Response:
    """A result's "helped" / "not related" button: recorded as `POST /feedback` records it, signed by the
    session, then back to the same search saying so."""
    if not same_origin(request) or not same_secret(form.get("csrf", ""), csrf_token(request, session)):
        raise HTTPException(403, "this form did not come from this page (reload the page and try again)")
    back = safe_next(form.get("back"))
    suggested, verdict = form.get("suggested", ""), form.get("verdict", "")
    try:
        alert = Alert(text=form.get("q", ""), env=form.get("env") or None)
        if memory.incident(suggested) is None:
            raise InvalidInput(f"no incident {suggested[:80]!r} on record")
        memory.record_feedback(alert, suggested, verdict, who=session.who if session else "page", ref="page")
    except (ValidationError, InvalidInput) as exc:
        message = validation_message(exc) if isinstance(exc, ValidationError) else str(exc)
        raise HTTPException(400, f"feedback not recorded: {message}") from exc
    path, _, query = back.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "said"]
    query = urlencode([*kept, ("said", f"{suggested} {verdict}")])
    return RedirectResponse(f"{path}?{query}", status_code=303, headers=HEADERS)


def same_origin(request: Request) -> bool:
    """Did the browser say this form came from this origin? `Sec-Fetch-Site` where the browser sends it;
    `Origin` otherwise (the page's same-origin referrer policy keeps it; "null" is what another site's
    sandboxed frame or no-referrer page sends)."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("origin")
    return origin in (None, f"{request.url.scheme}://{request.url.netloc}")


# -- one incident ---------------------------------------------------------------------------------


@router.get("/incidents/{incident_id:path}")
def incident(
    request: Request,
    incident_id: str,
    session: Session | Person | None = Depends(page_user),
    memory: Memory = Depends(memory_provider),
) -> HTMLResponse:
    found = memory.incident(incident_id)
    if found is None:
        return render(
            "missing.html",
            404,
            incident_id=redact(incident_id),  # the address is input: a token pasted there is not shown back
            panel=panel(request, memory),
            logged_in=logged_in(session),
        )
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
        nothing_close=NOTHING_CLOSE,
        weak_fix=WEAK_FIX,
        logged_in=logged_in(session),
    )
