"""Post what the memory found back where the responder is: a PagerDuty note, a Slack message.

Every post goes through httpx with a timeout and retries with backoff (429 after Retry-After, 5xx,
network errors); a 4xx other than 429 is final. Tokens are sent, never logged.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
from pydantic import SecretStr

from ..http_retry import Refused, RetriesExhausted, send
from ..ranking import Neighbour
from ..retrieve import Lookup


class RedactSecrets(logging.Filter):
    """Scrub known secrets from records of a chatty library logger (httpx logs every URL it posts to,
    and a Slack incoming-webhook URL is itself a credential)."""

    def __init__(self, secrets: list[str]):
        super().__init__()
        self._secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(s in message for s in self._secrets):
            for secret in self._secrets:
                message = message.replace(secret, "[REDACTED]")
            record.msg, record.args = message, None
        return True


class PostFailed(Exception):
    """A target did not take the message after retries (or refused it)."""


def note_text(title: str, lookup: Lookup) -> str:
    """Plain text for a PagerDuty note: the top neighbours with link, age, what worked, what did not."""
    if not lookup.neighbours:
        return f"oncall-memory: nothing similar to \"{title}\" on record."
    lines = [f"oncall-memory: {len(lookup.neighbours)} similar past incident(s) for \"{title}\""]
    if lookup.degraded:
        lines.append(f"(note: {lookup.degraded})")
    for i, n in enumerate(lookup.neighbours, start=1):
        lines.append("")
        lines.append(f"{i}. {n.id} {n.title}" + (f" ({n.age})" if n.age else ""))
        if n.fixes_worked:
            lines.append(f"   fixed by: {'; '.join(n.fixes_worked)}")
        if n.fixes_failed:
            lines.append(f"   tried without effect: {'; '.join(n.fixes_failed)}")
        lines.append(f"   why: {'; '.join(r for r in n.reasons if not r.endswith(' ago'))}")
        if n.url:
            lines.append(f"   {n.url}")
    return "\n".join(lines)


def _slack_block(i: int, n: Neighbour) -> dict[str, Any]:
    head = f"*{i}. <{n.url}|{n.id}>* {n.title}" if n.url else f"*{i}. {n.id}* {n.title}"
    body = [head + (f"  _{n.age}_" if n.age else "")]
    if n.fixes_worked:
        body.append(f":white_check_mark: fixed by: {'; '.join(n.fixes_worked)}")
    if n.fixes_failed:
        body.append(f":x: tried without effect: {'; '.join(n.fixes_failed)}")
    body.append(f"why: {'; '.join(r for r in n.reasons if not r.endswith(' ago'))}")
    return {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(body)}}


def slack_message(title: str, lookup: Lookup) -> dict[str, Any]:
    """An incoming-webhook message: `text` for notifications, Block Kit blocks for the channel."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": f"Seen before? {title}"[:150]}}
    ]
    if lookup.degraded:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": lookup.degraded}]})
    blocks += [_slack_block(i, n) for i, n in enumerate(lookup.neighbours, start=1)] or [
        {"type": "section", "text": {"type": "mrkdwn", "text": "Nothing similar on record."}}
    ]
    return {"text": note_text(title, lookup), "blocks": blocks}


class Poster:
    """HTTP posting with retries, shared by the targets."""

    def __init__(self, *, max_retries: int = 4, backoff: float = 1.0, timeout: float = 10.0):
        self._http = httpx.Client(timeout=timeout)
        self._max_retries = max_retries
        self._backoff = backoff

    def close(self) -> None:
        self._http.close()

    def post(self, what: str, url: str, *, json: dict, headers: dict | None = None) -> httpx.Response:
        try:
            return send(self._http, "POST", url, what=what, max_retries=self._max_retries, backoff=self._backoff,
                        json=json, headers=headers or {})
        except Refused as exc:
            raise PostFailed(f"{what} refused the post: {exc} {exc.response.text[:200]}") from exc
        except RetriesExhausted as exc:
            raise PostFailed(f"{what} failed after {self._max_retries} retries ({exc.problem})") from exc


class PagerDutyNotes:
    target = "pagerduty-note"

    def __init__(self, poster: Poster, *, base_url: str, token: SecretStr, from_email: str):
        self._poster, self._base, self._token, self._from = poster, base_url.rstrip("/"), token, from_email

    def send(self, incident_id: str, title: str, lookup: Lookup) -> None:
        self._poster.post(
            f"PagerDuty note on {incident_id}",
            f"{self._base}/incidents/{incident_id}/notes",
            json={"note": {"content": note_text(title, lookup)}},
            headers={
                "Authorization": f"Token token={self._token.get_secret_value()}",
                "From": self._from,
                "Accept": "application/vnd.pagerduty+json;version=2",
            },
        )


class SlackWebhook:
    target = "slack"

    def __init__(self, poster: Poster, *, url: SecretStr):
        self._poster, self._url = poster, url

    def send(self, title: str, lookup: Lookup) -> None:
        self._poster.post("Slack", self._url.get_secret_value(), json=slack_message(title, lookup))
