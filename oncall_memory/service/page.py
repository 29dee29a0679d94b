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
"""

from __future__ import annotations

import difflib
import hashlib
import hmac
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, parse_qsl, quote, urlencode

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import ValidationError

from ..answer.ranking import AGE, FIX_KINDS, Neighbour, human_age
from ..answer.render import NOTHING_CLOSE, WEAK_FIX
from ..answer.retrieve import Lookup
from ..credentials import same_secret
from ..domain.alert import Alert, Filters
from ..domain.incident import worked
from ..domain.pasted import pasted_facts
from ..errors import InvalidInput, OncallMemoryError
from ..ingest.backlog import validation_message
from ..links import web_link
from ..memory import Memory
from ..redact import already_redacted, redact, redact_all
from ..store import payload as P
from .auth import _bearer, trusted_peer
from .deps import accounts_of, attempts_of, memory_provider, outbox_of, page_secret_of, sessions_of, settings_of
from .outbox import FAILED, NEW, PENDING, SENDING
from .sessions import Person, Session

router = APIRouter(include_in_schema=False)

COOKIE = "oncall_memory_session"
FACTS = ("service", "env", "flavor", "tags")
LIMITS = (5, 10, 20)
SINCE = {"": "any time", "30d": "last 30 days", "182d": "last 6 months", "365d": "last year"}
MAX_FORM_BYTES = 4096
MAX_FEEDBACK_BYTES = 32_768  # the feedback form carries the alert text it is about
# One same-origin script (Enter submits) and nothing else; nothing linked learns what was searched.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
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
    env.filters["when"] = when
    env.filters["fold"] = fold
    return env


def fold(text: str, width: int) -> str:
    """A pasted alert on one line for a heading: its lines joined, cut at a word within `width` with an
    ellipsis (tapping the folded search opens the box with the whole alert)."""
    line = " ".join(text.split())
    if len(line) <= width:
        return line
    cut = line[: width - 1]
    if " " in cut[width // 2 :]:  # a word boundary in the second half; a single long token is cut anyway
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


def when(value: Any) -> dict[str, str] | None:
    """A stored time as people read it ("3 days ago"), with the exact time for a hover and a machine."""
    if not value:
        return None
    try:
        at = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return {"human": str(value), "exact": str(value), "iso": ""}
    at = at if at.tzinfo else at.replace(tzinfo=UTC)
    return {"human": ago(at), "exact": at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"), "iso": at.isoformat()}


def render(name: str, code: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(templates().get_template(name).render(**context), status_code=code, headers=HEADERS)


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


# -- who may look ---------------------------------------------------------------------------------


class LoginRequired(Exception):
    def __init__(self, next_path: str):
        self.next_path = next_path


def page_user(request: Request) -> Session | Person | None:
    """Who is looking: the person a trusted proxy vouches for, else the session (None for a bearer token, or
    when no token is configured: the service then refuses to listen beyond loopback, see `auth.exposure`)."""
    if (person := proxy_person(request)) is not None:
        return person
    token = settings_of(request).service.api_token
    if token is None and not accounts_of(request).any():
        return None
    if token is not None and same_secret(_bearer(request), token.get_secret_value()):
        return None

    def key_of(person: str | None) -> str | None:  # what the session must still have been opened with
        if person is not None:
            return accounts_of(request).fingerprint(person)
        return None if token is None else token.get_secret_value()

    session = sessions_of(request).find(request.cookies.get(COOKIE, ""), key_of)
    if session is None:
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise LoginRequired(path)
    return session


def logged_in(session: Session | Person | None) -> bool:
    """Did this person log in on the page (so "Log out" means something)? Not with a bearer token, not
    through an authenticating proxy, not where no login is configured."""
    return isinstance(session, Session)


def bearer_or_session(request: Request) -> None:
    """The API's documentation is for a logged-in person too: the bearer token or a page session opens it
    (reading it changes nothing; the API itself stays bearer-only)."""
    try:
        page_user(request)
    except LoginRequired:
        raise HTTPException(
            401, "log in at /login, or send the API token as a bearer token", headers={"WWW-Authenticate": "Bearer"}
        ) from None


MAX_PERSON = 200  # characters of a proxy's name for someone (an email address)


def proxy_person(request: Request) -> Person | None:
    """The person the configured auth-proxy header names, on a request that came through a trusted proxy
    (its direct peer is in ONCALL_MEMORY_FORWARDED_ALLOW_IPS): anyone else could send the header too."""
    settings = settings_of(request)
    header = settings.service.auth_proxy_header
    if not header or not trusted_peer(request, settings.service.forwarded_allow_ips):
        return None
    name = " ".join(request.headers.get(header, "").split())[:MAX_PERSON]
    if not name:
        return None
    csrf = hmac.new(page_secret_of(request), b"proxy person " + name.encode(), hashlib.sha256).hexdigest()
    return Person(who=f"user:{name}", csrf=csrf)


def csrf_token(request: Request, session: Session | Person | None) -> str:
    """What a form that changes something must carry: the session's own token, or without a session (no
    API token, loopback) a MAC under a secret of this process."""
    if session is not None:
        return session.csrf
    secret = page_secret_of(request)
    return hmac.new(secret, b"anonymous page csrf", hashlib.sha256).hexdigest()


def safe_next(value: str | None) -> str:
    """Where to go after logging in: a path on this service, never another site (`//evil`, `/\\evil`)."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")) or any(c in value for c in "\r\n"):
        return "/"
    return value


def login_redirect(request: Request, exc: LoginRequired) -> RedirectResponse:
    return RedirectResponse("/login?" + urlencode({"next": exc.next_path}), status_code=303, headers=HEADERS)


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
    return render("search.html", code, **context)


def derive_facts(
    form: dict[str, Any], known_values: dict[str, list[str]], mapping: dict[str, list[str]]
) -> dict[str, str]:
    """Fill the facts the responder left empty from the pasted alert (as the webhooks read them), in
    place; returns fact -> where it came from, for the page to say so."""
    if not form["q"].strip():
        return {}
    derived = {}
    for fact, (value, source) in pasted_facts(form["q"], known_values, mapping).items():
        if not form.get(fact):
            form[fact] = value
            derived[fact] = source
    return derived


def typo_hints(form: dict[str, Any], known_values: dict[str, list[str]]) -> list[dict[str, Any]]:
    """For a service, env or flavor the memory has never seen: the nearest it knows, as one-click fixes."""
    hints = []
    for fact in ("service", "env", "flavor"):
        value, candidates = form.get(fact), known_values.get(fact) or []
        if not value or not candidates or value in candidates:
            continue
        near = difflib.get_close_matches(value, candidates, n=3, cutoff=0.6)
        hints.append({"fact": fact, "value": value, "near": near})
    return hints


def clip_said(said: str) -> str:
    return redact(said)[:200]


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
    """`ranking.human_age`, the one rule for ages, of a moment."""
    return human_age((datetime.now(UTC) - at).total_seconds() / 86400)


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
    `Origin` otherwise (which is "null" here: the page's no-referrer policy hides it)."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("origin")
    return origin in (None, "null", f"{request.url.scheme}://{request.url.netloc}")


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
            "missing.html", 404, incident_id=incident_id, panel=panel(request, memory), logged_in=logged_in(session)
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
