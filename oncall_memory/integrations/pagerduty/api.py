"""PagerDuty's REST API v2, as the source (reading history) and the notes target (writing) both need it.

What it keeps to, from PagerDuty's own docs:
- **Rate limit**: 960 requests a minute per API key, shared by everything using the key. One limiter
  per key in this process keeps us below it (default 900/min) for the source and the notes together; a
  429 is waited out for `ratelimit-reset` seconds (PagerDuty's header; `Retry-After` if a proxy sends
  it), capped, and retried.
- **Time range**: `since`/`until` span at most 6 months (the default is 1 month), so history is read
  in slices of 180 days.
- **Pagination**: offset + limit, and no offset beyond 10,000: a slice holding more is bisected in time
  (asked with `total=true`), as PagerDuty's own python client does.
- A 400 says what was wrong with the request (PagerDuty's error message); 401/403 point at the token.

Evaluated and not used: PagerDuty's `pagerduty` package (python-pagerduty 7.2). It retries 429 without
limit by default and sleeps its own cooldown rather than `ratelimit-reset`, has no limiter shared by two
clients on one key, and brings a second HTTP stack (httpx2) beside this project's httpx. Its time-window
bisection for the 10,000-offset limit is the idea used here.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import SecretStr

from ...errors import InvalidInput, SourceFailed
from ...http_answers import error_message, wait_hint
from ...settings import Settings

log = logging.getLogger(__name__)

ACCEPT = "application/vnd.pagerduty+json;version=2"
MAX_RANGE = timedelta(days=180)  # since/until may span 6 months at most
OFFSET_LIMIT = 10_000  # offset + limit may not go past this
PAGE = 100


class RateLimiter:
    """At most `per_minute` requests in any minute, spread out (a token bucket refilled continuously)."""

    def __init__(self, per_minute: float, *, burst_seconds: float = 5.0):
        self.per_minute = per_minute
        self._tokens = max(1.0, per_minute / 60.0 * burst_seconds)  # a short burst, then the steady rate
        self._capacity = self._tokens
        self._at = time.monotonic()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                self._tokens = min(self._capacity, self._tokens + (now - self._at) * self.per_minute / 60.0)
                self._at = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return
                wait = (1 - self._tokens) * 60.0 / self.per_minute
            time.sleep(wait)


_limiters: dict[str, RateLimiter] = {}
_limiters_lock = threading.Lock()


def limiter_for(token: str, per_minute: float) -> RateLimiter:
    """The one limiter of this API key in this process (the key is identified by its hash, never kept)."""
    key = hashlib.sha256(token.encode()).hexdigest()
    with _limiters_lock:
        limiter = _limiters.get(key)
        if limiter is None or limiter.per_minute != per_minute:
            limiter = _limiters[key] = RateLimiter(per_minute)
        return limiter


class PagerDutyAPI:
    """A REST API v2 client for one API key. A context manager (it holds a connection pool)."""

    def __init__(
        self,
        token: SecretStr,
        *,
        base_url: str = "https://api.pagerduty.com",
        from_email: str | None = None,
        per_minute: float = 900,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_wait: float = 60.0,
        max_throttle: float = 600.0,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ):
        headers = {"Authorization": f"Token token={token.get_secret_value()}", "Accept": ACCEPT}
        if from_email:
            headers["From"] = from_email
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)
        self._limiter = limiter_for(token.get_secret_value(), per_minute)
        self._max_retries = max_retries
        self._backoff = backoff
        self.max_wait = max_wait
        self.max_throttle = max_throttle

    @classmethod
    def from_settings(cls, settings: Settings, *, with_from: bool = False) -> PagerDutyAPI:
        """The client the settings describe (`with_from`: the From: header notes need)."""
        if settings.pagerduty.token is None:
            raise InvalidInput("PagerDuty needs ONCALL_MEMORY_PAGERDUTY_TOKEN (a REST API key)")
        return cls(
            settings.pagerduty.token,
            base_url=settings.pagerduty.url,
            from_email=settings.pagerduty.from_email if with_from else None,
            per_minute=settings.pagerduty.requests_per_minute,
            max_retries=settings.pagerduty.max_retries,
            backoff=settings.pagerduty.backoff,
            max_wait=settings.deliveries.retry_after_cap,
            timeout=settings.deliveries.post_timeout if with_from else 30.0,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PagerDutyAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one request --------------------------------------------------------------------------------

    def send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request, through the limiter: the response, whatever its status. Raises `httpx.TransportError`."""
        self._limiter.acquire()
        return self._http.request(method, path, **kwargs)

    def get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """GET `path` as JSON, retrying 429 (after the wait PagerDuty asks for), 5xx and network errors.

        Raises `SourceFailed` with PagerDuty's reason for anything else, or after the retries."""
        problem, attempt, throttled = "", 0, 0.0
        while True:
            delay = self._backoff * 2**attempt
            try:
                response = self.send("GET", path, params=params)
            except httpx.TransportError as exc:
                problem = type(exc).__name__
            else:
                if response.status_code < 300:
                    return response.json()
                problem = f"HTTP {response.status_code}"
                if response.status_code == 429:
                    # Being told to wait is not a failure: a 429 storm is waited out (up to `max_throttle`
                    # in all) without using up the retries meant for errors.
                    wait = wait_hint(response, cap=self.max_wait)
                    wait = delay if wait is None else wait
                    throttled += wait
                    if throttled > self.max_throttle:
                        raise SourceFailed(
                            f"PagerDuty kept answering 429 to GET {path} for {throttled:.0f}s: "
                            "another tool may be using up this API key's 960 requests a minute"
                        )
                    log.warning("PagerDuty GET %s: rate limited, waiting %.1fs as asked", path, wait)
                    time.sleep(wait)
                    continue
                if response.status_code in (401, 403):
                    raise SourceFailed(
                        f"PagerDuty GET {path} answered {response.status_code} ({error_message(response)}): "
                        "check ONCALL_MEMORY_PAGERDUTY_TOKEN and its permissions"
                    )
                elif response.status_code < 500:
                    # 400, 404, 422: asking again gets the same answer.
                    raise SourceFailed(
                        f"PagerDuty refused GET {path} ({response.status_code}): {error_message(response)}",
                        permanent=response.status_code not in (408, 409),
                    )
            if attempt >= self._max_retries:
                raise SourceFailed(f"PagerDuty GET {path} failed after {self._max_retries} retries ({problem})")
            log.warning("PagerDuty GET %s: %s, retrying in %.1fs", path, problem, delay)
            time.sleep(delay)
            attempt += 1

    # -- what the source reads ----------------------------------------------------------------------

    def incidents(
        self, since: datetime, until: datetime, *, statuses: list[str], service_ids: list[str] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every incident created in [since, until), oldest slice first, whatever the span."""
        start = since
        while start < until:
            end = min(until, start + MAX_RANGE)
            yield from self._slice(start, end, statuses, service_ids or [])
            start = end

    def _slice(self, since: datetime, until: datetime, statuses: list[str], service_ids: list[str]) -> Iterator[dict]:
        params: dict[str, Any] = {
            "since": since.isoformat(),
            "until": until.isoformat(),
            "time_zone": "UTC",
            "statuses[]": statuses,
            "limit": PAGE,
        }
        if service_ids:
            params["service_ids[]"] = service_ids
        first = self.get("/incidents", {**params, "offset": 0, "total": "true"})
        total = first.get("total")
        if total is not None and total > OFFSET_LIMIT and until - since > timedelta(seconds=2):
            middle = since + (until - since) / 2
            log.info("PagerDuty: %s incidents in %s..%s, over the offset limit: bisecting", total, since, until)
            yield from self._slice(since, middle, statuses, service_ids)
            yield from self._slice(middle, until, statuses, service_ids)
            return
        page, offset = first, 0
        while True:
            incidents = page.get("incidents", [])
            yield from incidents
            offset += len(incidents) or PAGE
            if not page.get("more") or offset + PAGE > OFFSET_LIMIT:
                return
            page = self.get("/incidents", {**params, "offset": offset})

    def incident(self, incident_id: str) -> dict[str, Any]:
        return self.get(f"/incidents/{quote(incident_id, safe='')}").get("incident", {})

    def post_note(self, incident_id: str, content: str) -> httpx.Response:
        """Post one note on an incident (with the From: header the client was built with): the response,
        whatever its status. Raises `httpx.TransportError`."""
        path = f"/incidents/{quote(incident_id, safe='')}/notes"
        return self.send("POST", path, json={"note": {"content": content}})

    def notes(self, incident_id: str) -> list[dict[str, Any]]:
        return self.get(f"/incidents/{quote(incident_id, safe='')}/notes").get("notes", [])

    def oldest_alert(self, incident_id: str) -> dict[str, Any] | None:
        """The incident's first alert, asked for by creation time (an unsorted list has no "first")."""
        alerts = self.get(
            f"/incidents/{quote(incident_id, safe='')}/alerts", {"sort_by": "created_at:asc", "limit": 1}
        ).get("alerts", [])
        return alerts[0] if alerts else None
