"""Asking a running service instead of opening the memory: its model is loaded and its store is not
contended (an embedded store has one owner, and while a service holds it the CLI could not open it).

The service writes `<data dir>/service.json` while it runs; `ONCALL_MEMORY_URL` names one explicitly.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..hosts import is_loopback

if TYPE_CHECKING:
    import http.client

    from ..settings import Settings

TIMEOUT = 30.0  # seconds: a lookup on a busy service, the local model included


def service_url(settings: Settings) -> str | None:
    """The URL of a service to ask: ONCALL_MEMORY_URL, else the one running on this data dir."""
    return find_service(settings.service.url, settings.dir.service)


def find_service(url: str | None, path: Path | None) -> str | None:
    """`url` if one is named, else the one `path` (<data dir>/service.json) names while its process runs."""
    if url:
        return url.rstrip("/")
    try:
        info = json.loads(path.read_text()) if path else None
    except (OSError, ValueError):
        return None
    if not info or not _alive(int(info.get("pid", 0))):
        if path is not None and info is not None:
            path.unlink(missing_ok=True)  # left by a service that was killed
        return None
    return str(info["url"]).rstrip("/")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return pid > 0


def private_channel(url: str) -> bool:
    """Does a request to `url` stay on this machine or inside TLS?"""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    return is_loopback(parts.hostname or "")


class Unreachable(Exception):
    """The service did not answer (refused, timed out, reset): the caller looks up by itself."""


@dataclass(frozen=True)
class Response:
    status_code: int
    headers: dict[str, str]  # names lower-cased
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def request(settings: Settings, url: str, method: str, path: str, body: dict[str, Any] | None = None) -> Response:
    token = settings.service.api_token
    return call(url, method, path, body, token=token.get_secret_value() if token else None)


def call(url: str, method: str, path: str, body: dict[str, Any] | None = None, *, token: str | None = None) -> Response:
    """One request to the service. The standard library's client, not httpx: importing httpx costs a CLI
    start-up about 90 ms (its command-line entry point brings click and rich), and this one request on
    loopback needs none of what it adds."""
    import http.client  # here, not at the top: a `similar` with no service to ask never uses it (20 ms of its start)

    headers = {"Accept": "application/json", **_bearer(token)}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    connection, prefix = _connection(url)
    try:
        connection.request(method, prefix + path, body=data, headers=headers)
        answer = connection.getresponse()
        text = answer.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException) as exc:
        raise Unreachable(f"{type(exc).__name__}: {exc}") from exc
    finally:
        connection.close()
    return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, text)


def _connection(url: str) -> tuple[http.client.HTTPConnection, str]:
    """A connection to the service at `url`, and the path its routes sit under."""
    import http.client

    parts = urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return connection_class(parts.netloc, timeout=TIMEOUT), parts.path.rstrip("/")


def _bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def post(settings: Settings, url: str, path: str, body: dict[str, Any]) -> Response:
    return request(settings, url, "POST", path, body)


def get(settings: Settings, url: str, path: str) -> Response:
    return request(settings, url, "GET", path)


def detail(response: Response) -> str:
    """The service's own explanation of a 4xx/5xx."""
    if response.headers.get("content-type", "").startswith("application/json"):
        try:
            return str(response.json().get("detail", response.text))
        except (ValueError, AttributeError):
            pass
    return response.text[:500]


def download(settings: Settings, url: str, path: str, into: Path) -> dict[str, str]:
    """POST `path` and write the answer's body to the file `into`, in pieces (a backup may be gigabytes).
    Returns the answer's headers; raises `Unreachable` as `call` does, `OncallMemoryError` on a 4xx/5xx."""
    import http.client

    from ..errors import OncallMemoryError

    token = settings.service.api_token
    connection, prefix = _connection(url)
    try:
        connection.request("POST", prefix + path, headers=_bearer(token.get_secret_value() if token else None))
        answer = connection.getresponse()
        if answer.status >= 400:
            text = answer.read().decode("utf-8", "replace")
            got = Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, text)
            raise OncallMemoryError(f"the service at {url} answered {answer.status}: {detail(got)}")
        with into.open("wb") as out:
            while chunk := answer.read(1 << 20):
                out.write(chunk)
        return {k.lower(): v for k, v in answer.getheaders()}
    except (OSError, http.client.HTTPException) as exc:
        raise Unreachable(f"{type(exc).__name__}: {exc}") from exc
    finally:
        connection.close()
