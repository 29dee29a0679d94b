"""The answer as a Slack message: by an incoming webhook (at-least-once: it cannot be read back), or by the
Slack app's bot (`chat.postMessage`, with feedback buttons under each suggestion)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
from pydantic import SecretStr

from ...answer.render import Answer, Extra
from ...jobs import Job
from ...targets import DeliveryError, Target, check, transport_failure
from .render import job_slack

if TYPE_CHECKING:
    from ...settings import Settings


class SlackWebhook(Target):
    name = "slack"

    def describe(self) -> str:
        return "Slack, through the incoming webhook"

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

    def describe(self) -> str:
        return f"Slack, posted by the app to {self._channel} with feedback buttons"

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


def make_targets(settings: Settings, buttons: Extra | None = None) -> list[Target]:
    """Slack's target: the app's bot (bot token and channel, with `buttons` under each suggestion) or else
    the incoming webhook; none when neither is set."""
    if settings.slack.bot_token and settings.slack.channel:
        return [
            SlackBot(
                settings.slack.bot_token,
                settings.slack.channel,
                api_url=settings.slack.api_url,
                extra=buttons,
                timeout=settings.deliveries.post_timeout,
                wait_cap=settings.deliveries.retry_after_cap,
            )
        ]
    if settings.slack.webhook_url:
        return [
            SlackWebhook(
                settings.slack.webhook_url,
                timeout=settings.deliveries.post_timeout,
                wait_cap=settings.deliveries.retry_after_cap,
            )
        ]
    return []
