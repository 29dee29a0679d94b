"""One JSON-over-HTTPS client for the trackers read as sources (Jira, ServiceNow, GitHub): retries and waits
as each vendor asks, and errors that say which setting to fix.

- **429** (and GitHub's 403 with `x-ratelimit-remaining: 0`) is waited out for `Retry-After` seconds, or
  until `x-ratelimit-reset` (an epoch, GitHub) / `ratelimit-reset` (seconds), each wait capped, all waits
  together capped (`max_throttle`): being told to wait is not a failure and does not use up the retries.
- **5xx and network errors** are retried with doubling backoff, `max_retries` times.
- **401/403** name the settings to check; other 4xx carry the vendor's own words.
- **A next-page URL** the vendor gives (a `Link` header) is followed only on the configured host: a body
  cannot send the credentials elsewhere.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..errors import InvalidInput, SourceFailed
from ..http_answers import error_message, wait_hint
from . import moment

log = logging.getLogger(__name__)


class VendorAPI:
    """A client for one vendor's REST API at `base_url`. A context manager (it holds a connection pool)."""

    def __init__(
        self,
        vendor: str,
        base_url: str,
        *,
        settings_hint: str,
        headers: dict[str, str] | None = None,
        auth: httpx.Auth | tuple[str, str] | None = None,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_wait: float = 300.0,
        max_throttle: float = 900.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] | None = None,
    ):
        self.vendor = vendor
        self.base_url = base_url.rstrip("/")
        self._host = urlsplit(self.base_url).netloc.lower()
        self._hint = settings_hint  # "ONCALL_MEMORY_JIRA_EMAIL and ONCALL_MEMORY_JIRA_TOKEN"
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Accept": "application/json", "User-Agent": "oncall-memory", **(headers or {})},
            auth=auth,
            timeout=timeout,
            follow_redirects=False,
        )
        self._max_retries = max_retries
        self._backoff = backoff
        self._max_wait = max_wait
        self._max_throttle = max_throttle
        self._sleep = sleep or time.sleep

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> VendorAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path_or_url: str, params: dict[str, Any] | None = None) -> httpx.Response:
        """GET a path under the base URL (or a next-page URL on the same host): the 2xx response whose body
        is JSON. Raises `SourceFailed` with the vendor's reason, or after the retries."""
        if "://" in path_or_url and urlsplit(path_or_url).netloc.lower() != self._host:
            raise SourceFailed(
                f"{self.vendor} sent a next-page link to another host ({urlsplit(path_or_url).netloc}): not followed",
                permanent=True,
            )
        shown = urlsplit(path_or_url).path or path_or_url
        problem, attempt, throttled = "", 0, 0.0
        while True:
            delay = self._backoff * 2**attempt
            try:
                response = self._http.get(path_or_url, params=params)
            except httpx.TransportError as exc:
                problem = type(exc).__name__
            else:
                if response.status_code < 300:
                    try:
                        response.json()
                    except ValueError:
                        raise SourceFailed(
                            f"{self.vendor} answered GET {shown} with a body that is not JSON "
                            f"({' '.join(response.text.split())[:120]!r}): is {self.base_url} the API's address?",
                            permanent=True,
                        ) from None
                    return response
                problem = f"HTTP {response.status_code}"
                wait = self._throttle_wait(response)
                if wait is not None:
                    throttled += wait
                    if throttled > self._max_throttle:
                        raise SourceFailed(
                            f"{self.vendor} kept answering {response.status_code} (rate limited) to GET {shown} "
                            f"for {throttled:.0f}s: another tool may be using up this account's rate limit"
                        )
                    log.warning("%s GET %s: rate limited, waiting %.1fs as asked", self.vendor, shown, wait)
                    self._sleep(wait)
                    continue
                if response.status_code in (401, 403):
                    raise SourceFailed(
                        f"{self.vendor} GET {shown} answered {response.status_code} ({error_message(response)}): "
                        f"check {self._hint} and the account's permissions",
                        permanent=True,
                    )
                if response.status_code < 500 and response.status_code not in (408, 409):
                    raise SourceFailed(
                        f"{self.vendor} refused GET {shown} ({response.status_code}): {error_message(response)}",
                        permanent=True,
                    )
            if attempt >= self._max_retries:
                raise SourceFailed(f"{self.vendor} GET {shown} failed after {self._max_retries} retries ({problem})")
            log.warning("%s GET %s: %s, retrying in %.1fs", self.vendor, shown, problem, delay)
            self._sleep(delay)
            attempt += 1

    def linked_pages(self, path: str, params: dict[str, Any], per_page: int = 100) -> Iterator[list[dict[str, Any]]]:
        """Each page of a listing whose body is a JSON list, following `Link: rel="next"` (GitHub, GitLab)."""
        url: str = path
        query: dict[str, Any] | None = {**params, "per_page": per_page}
        while True:
            response = self.get(url, query)
            body = response.json()
            if not isinstance(body, list):
                return
            yield [item for item in body if isinstance(item, dict)]
            following = next_link(response)
            if following is None or not body:
                return
            url, query = following, None

    def updated_until(self, path: str, params: dict[str, Any], until: datetime | None) -> Iterator[dict[str, Any]]:
        """Each item of a `linked_pages` listing the caller asked sorted by `updated_at`, oldest first, up to
        the first updated at or after `until`: the rest are later still, so no further page is read."""
        for page in self.linked_pages(path, params):
            for item in page:
                updated = moment(item.get("updated_at"))
                if until is not None and updated is not None and updated >= until:
                    return
                yield item

    def _throttle_wait(self, response: httpx.Response) -> float | None:
        """Seconds to wait when the response says "slow down"; None when it says something else."""
        headers = response.headers
        limited = response.status_code == 429 or (
            response.status_code == 403 and headers.get("x-ratelimit-remaining") == "0"
        )
        if not limited:
            return None
        if (wait := wait_hint(response, cap=self._max_wait)) is not None:
            return wait
        if (reset := _seconds(headers.get("x-ratelimit-reset"))) is not None:  # GitHub: an epoch time
            return min(self._max_wait, max(1.0, reset - time.time()))
        return min(self._max_wait, self._backoff * 8)


def require(settings_group: Any, source: str, *fields: str, why: str = "") -> None:
    """Raise `InvalidInput` naming every variable of `fields` the group leaves unset (ONCALL_MEMORY_<SOURCE>_...)."""
    prefix = settings_group.model_config["env_prefix"]
    missing = [f"{prefix}{name}".upper() for name in fields if not getattr(settings_group, name)]
    if missing:
        raise InvalidInput(f"the {source} source needs {', '.join(missing)}{f' ({why})' if why else ''}")


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def next_link(response: httpx.Response) -> str | None:
    """The `rel="next"` URL of a `Link` header (RFC 8288), as GitHub and ServiceNow page."""
    return response.links.get("next", {}).get("url")
