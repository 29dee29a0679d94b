"""Who may look at the search page: a bearer token, a login session (its cookie, `COOKIE`), or the person a
trusted authenticating proxy vouches for; the CSRF token a form that changes something carries; where to go
after logging in."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlencode

from fastapi import HTTPException, Request
from fastapi.responses import RedirectResponse

from ..credentials import bearer, same_secret
from ..errors import OncallMemoryError
from .auth import proxies, proxy_trust_problem, trusted_peer
from .deps import accounts_of, page_secret_of, sessions_of, settings_of
from .page_view import HEADERS
from .sessions import Person, Session

COOKIE = "oncall_memory_session"


class LoginRequired(OncallMemoryError):
    """The page needs a login first: answered with a redirect to the login form, back to `next_path` after."""

    def __init__(self, next_path: str):
        super().__init__(f"log in to see {next_path}")
        self.next_path = next_path


def page_user(request: Request) -> Session | Person | None:
    """Who is looking: the person a trusted proxy vouches for, else the session (None for a bearer token, or
    when no token is configured: the service then refuses to listen beyond loopback, see `auth.exposure`)."""
    if (person := proxy_person(request)) is not None:
        return person
    token = settings_of(request).service.api_token
    if token is None and not accounts_of(request).any():
        return None
    if token is not None and same_secret(bearer(request.headers), token.get_secret_value()):
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
    if not header or not trusted_peer(request, proxies(settings)) or proxy_trust_problem(settings):
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
