"""Asking a running service instead of opening the memory: its model is loaded and its store is not
contended (an embedded store has one owner, and while a service holds it the CLI could not open it).

The service writes `<data dir>/service.json` while it runs; `ONCALL_MEMORY_URL` names one explicitly. A service
found through service.json first proves it holds the data dir's local token (`local_token.py`): only then is
the token, or an alert, sent there.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .. import local_token
from ..datadir import DataDir
from ..errors import InvalidInput, ServiceUnreachable
from ..hosts import is_loopback

if TYPE_CHECKING:
    import http.client

    from ..settings import Settings

TIMEOUT = 30.0  # seconds: a lookup on a busy service, the local model included
PROOF_TIMEOUT = 5.0  # seconds the service named in service.json has to prove it is this data dir's


@dataclass(frozen=True)
class Service:
    """A running service to ask, and the bearer token it is sent: the local token for the one that proved
    it serves this data dir, the API token for one ONCALL_MEMORY_URL names."""

    url: str
    token: str | None = None

    def __str__(self) -> str:
        return self.url


def service_url(settings: Settings) -> Service | None:
    """The service to ask: ONCALL_MEMORY_URL, else the one running on this data dir (once it has proved it)."""
    token = settings.service.api_token
    return find_service(
        settings.service.url,
        settings.dir,
        api_token=token.get_secret_value() if token else None,
        plain_http=settings.service.allow_plain_http,
    )


def find_service(
    url: str | None, data: DataDir, *, api_token: str | None = None, plain_http: bool = False
) -> Service | None:
    """`url` if one is named (refused over plain HTTP to another machine unless `plain_http`), else the one
    `<data dir>/service.json` names while its process runs and proves it holds the data dir's local token.
    Raises `InvalidInput` for a URL the API token must not travel to."""
    if url:
        if not plain_http and not private_channel(url):
            raise InvalidInput(
                f"ONCALL_MEMORY_URL={_shown(url)} is plain HTTP to another machine: the API token and the alert would "
                "cross the network in clear. Use https://, or set ONCALL_MEMORY_ALLOW_PLAIN_HTTP=true on a network "
                "you trust"
            )
        return Service(url.rstrip("/"), api_token)
    path = data.service
    if path is None:
        return None
    try:
        info = json.loads(path.read_text())
        named, pid = str(info["url"]).rstrip("/"), int(info.get("pid", 0))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if not _alive(pid):
        path.unlink(missing_ok=True)  # left by a service that was killed
        return None
    token = local_token.read(data.local_token)
    # Its process id is alive but may be another program now, and another may listen on the port: until what
    # answers proves it holds this data dir's token, it gets neither the token nor an alert.
    problem = "no local token is kept beside it" if token is None else _unproven(named, token)
    if problem is None and token is not None:
        return Service(named, token)
    from .common import err

    err(f"{path.name} names a service at {named}, but {problem}; working here instead")
    return None


def _shown(url: str) -> str:
    """A URL as said back: its scheme and host, never a user or password in it."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"


def _unproven(url: str, token: str) -> str | None:
    """Why whatever answers at `url` is not known to hold `token`, or None when it proved it. It is asked a
    fresh challenge; nothing secret is sent."""
    asked = local_token.challenge()
    try:
        answer = call(Service(url), "GET", f"/proof?challenge={asked}", timeout=PROOF_TIMEOUT)
    except ServiceUnreachable as exc:
        return f"it did not answer ({exc})"
    try:
        proof = str(answer.json().get("proof", "")) if answer.status_code == 200 else ""
    except (ValueError, AttributeError):
        proof = ""
    if not local_token.proves(token, asked, proof):
        return "what answers there did not prove it serves this data dir"
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (OSError, ValueError, OverflowError):
        return False
    return pid > 0


def private_channel(url: str) -> bool:
    """Does a request to `url` stay on this machine or inside TLS?"""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    return is_loopback(parts.hostname or "")


@dataclass(frozen=True)
class Response:
    status_code: int
    headers: dict[str, str]  # names lower-cased
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def call(
    service: Service, method: str, path: str, body: dict[str, Any] | None = None, *, timeout: float = TIMEOUT
) -> Response:
    """One request to the service. The standard library's client, not httpx: importing httpx costs a CLI
    start-up about 90 ms (its command-line entry point brings click and rich), and this one request on
    loopback needs none of what it adds."""
    import http.client  # here, not at the top: a `similar` with no service to ask never uses it (20 ms of its start)

    headers = {"Accept": "application/json", **_bearer(service.token)}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    connection, prefix = _connection(service.url, timeout)
    try:
        connection.request(method, prefix + path, body=data, headers=headers)
        answer = connection.getresponse()
        text = answer.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException) as exc:
        raise ServiceUnreachable(f"{type(exc).__name__}: {exc}") from exc
    finally:
        connection.close()
    return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, text)


def _connection(url: str, timeout: float = TIMEOUT) -> tuple[http.client.HTTPConnection, str]:
    """A connection to the service at `url`, and the path its routes sit under."""
    import http.client

    parts = urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    netloc = parts.netloc.rpartition("@")[2]  # a user:password in the URL is not sent as the host
    return connection_class(netloc, timeout=timeout), parts.path.rstrip("/")


def _bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def post(service: Service, path: str, body: dict[str, Any]) -> Response:
    return call(service, "POST", path, body)


def get(service: Service, path: str) -> Response:
    return call(service, "GET", path)


def detail(response: Response) -> str:
    """The service's own explanation of a 4xx/5xx."""
    if response.headers.get("content-type", "").startswith("application/json"):
        try:
            return str(response.json().get("detail", response.text))
        except (ValueError, AttributeError):
            pass
    return response.text[:500]


def download(service: Service, path: str, into: Path) -> dict[str, str]:
    """POST `path` and write the answer's body to the file `into`, in pieces (a backup may be gigabytes).
    Returns the answer's headers; raises `ServiceUnreachable` as `call` does, `OncallMemoryError` on a 4xx/5xx."""
    import http.client

    from ..errors import OncallMemoryError

    connection, prefix = _connection(service.url)
    try:
        connection.request("POST", prefix + path, headers=_bearer(service.token))
        answer = connection.getresponse()
        if answer.status >= 400:
            text = answer.read().decode("utf-8", "replace")
            got = Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, text)
            raise OncallMemoryError(f"the service at {service} answered {answer.status}: {detail(got)}")
        with into.open("wb") as out:
            while chunk := answer.read(1 << 20):
                out.write(chunk)
        return {k.lower(): v for k, v in answer.getheaders()}
    except (OSError, http.client.HTTPException) as exc:
        raise ServiceUnreachable(f"{type(exc).__name__}: {exc}") from exc
    finally:
        connection.close()
