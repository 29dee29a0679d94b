"""Where the answer goes: a PagerDuty note, a Slack message. Each target is one small class with a
name (the ledger's key for "delivered"), `accepts(job)` and `send(job, lookup)`.

Every post goes through httpx with a timeout and retries with backoff (429 after Retry-After, 5xx,
network errors); a 4xx other than 429 is final. Tokens are sent, never logged.
"""

from __future__ import annotations

from typing import Protocol
from urllib.parse import quote

import httpx
from pydantic import SecretStr

from ..http_retry import Refused, RetriesExhausted, send
from ..render import note_text, slack_message
from ..retrieve import Lookup
from .inbound import Job


class PostFailed(Exception):
    """A target did not take the message after retries (or refused it)."""


class Target(Protocol):
    name: str

    def accepts(self, job: Job) -> bool:
        """Does this job go to this target at all (a note needs a PagerDuty incident)?"""
        ...

    def send(self, job: Job, lookup: Lookup) -> None:
        """Post the answer. Raises `PostFailed`."""
        ...


class Poster:
    """HTTP posting with retries, shared by the targets."""

    def __init__(self, *, max_retries: int = 4, backoff: float = 1.0, timeout: float = 10.0):
        self._http = httpx.Client(timeout=timeout)
        self._max_retries = max_retries
        self._backoff = backoff

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Poster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def post(self, what: str, url: str, *, json: dict, headers: dict | None = None) -> httpx.Response:
        try:
            return send(self._http, "POST", url, what=what, max_retries=self._max_retries, backoff=self._backoff,
                        json=json, headers=headers or {})
        except Refused as exc:
            raise PostFailed(f"{what} refused the post: {exc} {exc.response.text[:200]}") from exc
        except RetriesExhausted as exc:
            raise PostFailed(f"{what} failed after {self._max_retries} retries ({exc.problem})") from exc


class PagerDutyNotes:
    name = "pagerduty-note"

    def __init__(self, poster: Poster, *, base_url: str, token: SecretStr, from_email: str):
        self._poster, self._base, self._token, self._from = poster, base_url.rstrip("/"), token, from_email

    def accepts(self, job: Job) -> bool:
        return job.pagerduty_incident is not None

    def send(self, job: Job, lookup: Lookup) -> None:
        self._poster.post(
            f"PagerDuty note on {job.pagerduty_incident}",
            f"{self._base}/incidents/{quote(job.pagerduty_incident, safe='')}/notes",
            json={"note": {"content": note_text(job.title, lookup)}},
            headers={
                "Authorization": f"Token token={self._token.get_secret_value()}",
                "From": self._from,
                "Accept": "application/vnd.pagerduty+json;version=2",
            },
        )


class SlackWebhook:
    name = "slack"

    def __init__(self, poster: Poster, *, url: SecretStr):
        self._poster, self._url = poster, url

    def accepts(self, job: Job) -> bool:
        return True

    def send(self, job: Job, lookup: Lookup) -> None:
        self._poster.post("Slack", self._url.get_secret_value(), json=slack_message(job.title, lookup))
