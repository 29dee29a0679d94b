"""One retry policy for every outbound HTTP call (PagerDuty reads, PagerDuty notes, Slack posts).

429 waits for Retry-After (else backoff), 5xx and network errors back off exponentially, any other
4xx is final. Callers turn the two failures into their own errors, in their own words.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx

log = logging.getLogger(__name__)


class Refused(Exception):
    """The server answered with a 4xx other than 429: retrying will not help."""

    def __init__(self, response: httpx.Response):
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


class RetriesExhausted(Exception):
    """Every try failed; `problem` says how the last one did."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


def send(
    client: httpx.Client, method: str, url: str, *, what: str, max_retries: int, backoff: float, **kwargs: Any
) -> httpx.Response:
    """The first 2xx/3xx response to `method url`, after up to `max_retries` retries."""
    problem = ""
    for attempt in range(max_retries + 1):
        delay = backoff * 2**attempt
        try:
            response = client.request(method, url, **kwargs)
        except httpx.TransportError as exc:
            problem = type(exc).__name__
        else:
            if response.status_code < 400:
                return response
            problem = f"HTTP {response.status_code}"
            if response.status_code == 429:
                delay = _retry_after(response, delay)
            elif response.status_code < 500:
                raise Refused(response)
        if attempt < max_retries:
            log.warning("%s: %s, retrying in %.1fs", what, problem, delay)
            time.sleep(delay)
    raise RetriesExhausted(problem)


def _retry_after(response: httpx.Response, default: float) -> float:
    try:
        return max(0.0, float(response.headers["Retry-After"]))
    except (KeyError, ValueError):
        return default
