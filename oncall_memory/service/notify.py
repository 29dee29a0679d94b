"""Where the answer goes: a PagerDuty note, a Slack message. A target renders a job's answers once (the
outbox keeps the words, so every retry posts the same message) and makes one attempt per `send`; the
outbox decides when to try again.

Delivery semantics: a PagerDuty note carries a marker derived from the job's key, and after an
ambiguous attempt (a timeout, a 5xx, a crash in flight) the incident's notes are read back before
posting again: exactly once. A Slack incoming webhook cannot be read back: after an ambiguous attempt
the message is posted again, so Slack is at-least-once.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import SecretStr

from ..pagerduty import PagerDutyAPI, error_message, wait_hint
from ..render import PAGERDUTY_NOTE_LIMIT, Answer, Extra, job_note, job_slack
from .inbound import Job

# What to set when an answer would go nowhere (logged at start and when such an alert arrives).
NO_TARGET_HINT = (
    "set ONCALL_MEMORY_SLACK_WEBHOOK_URL, or ONCALL_MEMORY_SLACK_BOT_TOKEN and ONCALL_MEMORY_SLACK_CHANNEL, "
    "and for PagerDuty notes ONCALL_MEMORY_PAGERDUTY_TOKEN and ONCALL_MEMORY_PAGERDUTY_FROM_EMAIL"
)


class DeliveryError(Exception):
    """An attempt that did not deliver. `retry`: trying later may work; `wait`: how long the target asked
    for; `ambiguous`: the message may have arrived all the same."""

    def __init__(self, error: str, *, retry: bool, wait: float | None = None, ambiguous: bool = False):
        super().__init__(error)
        self.retry, self.wait, self.ambiguous = retry, wait, ambiguous


def check(response: httpx.Response, what: str, *, wait_cap: float) -> None:
    """Raise the `DeliveryError` a non-2xx answer means."""
    status = response.status_code
    if status < 300:
        return
    reason = f"{what}: HTTP {status} {error_message(response)[:200]}".rstrip()
    if status == 429:
        raise DeliveryError(reason, retry=True, wait=wait_hint(response, cap=wait_cap))
    if status >= 500 or status == 408:
        raise DeliveryError(reason, retry=True, ambiguous=True)  # the server may have acted before failing
    raise DeliveryError(reason, retry=False)  # refused: the same message will be refused again


def transport_failure(exc: httpx.TransportError, what: str) -> DeliveryError:
    # A connection that never opened delivered nothing; anything later (a timeout) may have.
    return DeliveryError(f"{what}: {type(exc).__name__}", retry=True, ambiguous=not isinstance(exc, httpx.ConnectError))


class Target(ABC):
    """Where a job's answer goes. Three methods to implement; reading back and closing have defaults."""

    name: str

    @abstractmethod
    def accepts(self, job: Job) -> bool:
        """Does this job go to this target at all (a note needs a PagerDuty incident)?"""

    @abstractmethod
    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        """The request body, fixed once per job."""

    @abstractmethod
    def send(self, job: Job, body: dict[str, Any]) -> None:
        """One attempt. Raises `DeliveryError`."""

    def already_delivered(self, job: Job) -> bool:
        """After an uncertain attempt: did it arrive? A target that cannot read back says no, and the
        message is posted again (at-least-once)."""
        return False

    def close(self) -> None:  # noqa: B027 - a default, not a missing abstract method
        """Release what the target holds (connections)."""


def marker(job: Job) -> str:
    return "oncall-memory ref " + hashlib.sha256(job.key.encode()).hexdigest()[:12]


class PagerDutyNotes(Target):
    name = "pagerduty-note"

    def __init__(self, api: PagerDutyAPI):
        self._api = api

    def accepts(self, job: Job) -> bool:
        return job.kind == "lookup" and job.pagerduty_incident is not None

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        mark = f"\n\n({marker(job)})"
        return {"note": {"content": job_note(job.title, answers, limit=PAGERDUTY_NOTE_LIMIT - len(mark)) + mark}}

    def send(self, job: Job, body: dict[str, Any]) -> None:
        what = f"PagerDuty note on {job.pagerduty_incident}"
        try:
            response = self._api.send(
                "POST", f"/incidents/{quote(job.pagerduty_incident or '', safe='')}/notes", json=body
            )
        except httpx.TransportError as exc:
            raise transport_failure(exc, what) from exc
        check(response, what, wait_cap=self._api.max_wait)

    def already_delivered(self, job: Job) -> bool:
        """Is a note with this job's marker on the incident? Read back after an ambiguous attempt."""
        mark = marker(job)
        try:
            notes = self._api.notes(job.pagerduty_incident or "")
        except Exception as exc:  # SourceFailed after its own retries: try the whole delivery again later
            raise DeliveryError(
                f"reading back the notes of {job.pagerduty_incident}: {exc}", retry=True, ambiguous=True
            ) from exc
        return any(mark in (n.get("content") or "") for n in notes)

    def close(self) -> None:
        self._api.close()


class SlackWebhook(Target):
    name = "slack"

    def __init__(self, url: SecretStr, *, timeout: float = 10.0, wait_cap: float = 300.0):
        self._url = url
        self._http = httpx.Client(timeout=timeout)
        self._wait_cap = wait_cap

    def accepts(self, job: Job) -> bool:
        return job.kind == "lookup"

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        return job_slack(job.title, answers)

    def send(self, job: Job, body: dict[str, Any]) -> None:
        try:
            response = self._http.post(self._url.get_secret_value(), json=body)
        except httpx.TransportError as exc:
            raise transport_failure(exc, "Slack") from exc
        check(response, "Slack", wait_cap=self._wait_cap)

    def close(self) -> None:
        self._http.close()


# chat.postMessage errors worth another try (Slack's own trouble); any other error is the app's setup
# (invalid_auth, channel_not_found, not_in_channel, missing_scope, invalid_blocks ...) and is final.
SLACK_TRANSIENT = {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}


class SlackBot(Target):
    """The Slack app posting the answer (`chat.postMessage` with the bot token), with feedback buttons
    under each suggestion. Used instead of the incoming webhook when a bot token and a channel are set."""

    name = "slack"

    def __init__(
        self,
        token: SecretStr,
        channel: str,
        *,
        api_url: str = "https://slack.com/api",
        extra: Extra | None = None,
        timeout: float = 10.0,
        wait_cap: float = 300.0,
    ):
        self._channel = channel
        self._extra = extra
        self._wait_cap = wait_cap
        self._http = httpx.Client(
            base_url=api_url.rstrip("/"),
            timeout=timeout,
            headers={"Authorization": f"Bearer {token.get_secret_value()}"},
        )

    def accepts(self, job: Job) -> bool:
        return job.kind == "lookup"

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        return {"channel": self._channel, **job_slack(job.title, answers, extra=self._extra)}

    def send(self, job: Job, body: dict[str, Any]) -> None:
        try:
            response = self._http.post("/chat.postMessage", json=body)
        except httpx.TransportError as exc:
            raise transport_failure(exc, "Slack") from exc
        check(response, "Slack chat.postMessage", wait_cap=self._wait_cap)
        try:
            answer = response.json()
        except ValueError as exc:  # a 200 that is not Slack's JSON: a proxy's page; it may have posted
            raise DeliveryError("Slack chat.postMessage: not Slack's JSON", retry=True, ambiguous=True) from exc
        if not isinstance(answer, dict) or answer.get("ok") is not True:
            error = str(answer.get("error") if isinstance(answer, dict) else answer)[:100]
            raise DeliveryError(f"Slack chat.postMessage: {error}", retry=error in SLACK_TRANSIENT)

    def close(self) -> None:
        self._http.close()
