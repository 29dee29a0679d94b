"""Where an answer goes: the port every delivery target implements (a PagerDuty note, a Slack message, the
memory itself when an incident is learnt), and what one attempt's failure means.

A target renders a job's answers once (the outbox keeps the words, so every retry posts the same message)
and makes one attempt per `send`; the outbox decides when to try again.

Delivery semantics: a PagerDuty note carries a marker derived from the job's key, and after an
ambiguous attempt (a timeout, a 5xx, a crash in flight) the incident's notes are read back before
posting again: exactly once. A Slack incoming webhook cannot be read back: after an ambiguous attempt
the message is posted again, so Slack is at-least-once.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import httpx

from .answer.render import Answer
from .errors import DeliveryError
from .http_answers import error_message, wait_hint
from .jobs import Job


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
    # What a learner learns, in words, for the startup's "learning as incidents close" line; None: the target
    # posts answers (and the line "answers go to" names it by `describe`).
    learns: ClassVar[str | None] = None
    # What a target that keeps answers here rather than posting them keeps, in words (the answer log); None:
    # it posts them somewhere.
    keeps: ClassVar[str | None] = None

    def describe(self) -> str:
        """Where answers go, in words, for the startup's log."""
        return self.name

    @abstractmethod
    def accepts(self, job: Job) -> bool:
        """Does this job go to this target at all (a note on an incident needs the incident)? Asked as the job
        is claimed, before a large group's alerts are read (`Job.unread`): decide by its key, kind or record."""

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
