"""The Slack app: ask the memory where the responders are (`/oncall-memory <alert text>`), and say whether
a suggestion helped with a button, under the answer and under the messages the webhooks post.

Every request is checked against Slack's signature before anything else is read: `X-Slack-Signature` is
`v0=` + the HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<raw body>` with the app's signing secret
(ONCALL_MEMORY_SLACK_SIGNING_SECRET). Unsigned, wrongly signed, older than five minutes or already seen:
401. Without a signing secret the routes are off (404).

Slack waits 3 s for an answer. A slash command is answered in the response when the lookup is done within
`ANSWER_WITHIN`, else with "looking" and the answer follows on the command's `response_url`. A button is
acknowledged at once; what it did is told on the `response_url`, which is followed only to Slack's own
hosts (or to the configured ONCALL_MEMORY_SLACK_API_URL's), never to a host the payload names.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any
from urllib.parse import urlsplit

import httpx
from fastapi import HTTPException

from ...answer.ranking import Neighbour
from ...answer.render import Answer, Extra, clip
from ...answer.retrieve import Lookup
from ...chat import ChatApp
from ...domain.alert import Alert
from ...errors import OncallMemoryError
from ...memory import Memory
from ...settings import Settings
from ...targets import Target
from .render import escape, job_slack
from .targets import make_targets

log = logging.getLogger(__name__)

WINDOW = 300  # seconds: Slack's own replay window for a signed request
ANSWER_WITHIN = 2.0  # seconds a slash command waits for its lookup before answering "looking" (Slack: 3 s)
SLACK_HOSTS = ("hooks.slack.com", "hooks.slack-gov.com")  # where Slack's response_urls point
HELPED, NOT_RELATED, SHARE = "helped", "not_related", "share"
VERDICTS = {HELPED: "helped", NOT_RELATED: "not related"}
MAX_VALUE = 2_000  # Block Kit: a button's value
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,30}")


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's v0 request signature (the same as slack-sdk's `SignatureVerifier.generate_signature`)."""
    base = b"v0:" + timestamp.encode("utf-8", "surrogateescape") + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


class Replays:
    """Signatures seen within the window: a captured request sent again is refused. Only verified requests
    are remembered, so without the secret nobody can fill it."""

    def __init__(self, window: float = WINDOW):
        self._window = window
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def first_time(self, sig: str, now: float) -> bool:
        with self._lock:
            if len(self._seen) > 1000:
                self._seen = {s: t for s, t in self._seen.items() if now - t <= self._window}
            if sig in self._seen:
                return False
            self._seen[sig] = now
            return True


class SlackApp(ChatApp):
    """The app's side of Slack: verifies requests, answers commands, records button presses, and posts
    follow-ups to response_urls (on its own threads, never on the event loop). Mounted by the service through
    the `chat_app` hook, at `/slack/commands` and `/slack/interactions`."""

    name = "slack"
    title = "Slack"
    variable = "ONCALL_MEMORY_SLACK_SIGNING_SECRET"
    guard = "Slack's request signature"

    @classmethod
    def on(cls, settings: Settings) -> bool:
        return settings.slack.signing_secret is not None

    def targets(self, settings: Settings) -> list[Target]:
        """Slack's targets, the bot's messages carrying this app's buttons."""
        return make_targets(settings, self.buttons())

    def __init__(self, settings: Settings, memory: Memory, *, transport: httpx.BaseTransport | None = None):
        assert settings.slack.signing_secret is not None
        self._secret = settings.slack.signing_secret.get_secret_value()
        self.memory = memory
        self._limit = settings.deliveries.notify_limit
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="slack")
        self._http = httpx.Client(timeout=settings.deliveries.post_timeout, transport=transport)
        self._replays = Replays()
        api = urlsplit(settings.slack.api_url)
        self._own = (api.scheme, api.netloc)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)
        self._http.close()

    # -- the gate --------------------------------------------------------------------------------------

    def verify(self, body: bytes, headers: Mapping[str, str]) -> None:
        self.check_signature(body, headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature"))

    def check_signature(self, body: bytes, timestamp: str | None, sig: str | None, now: float | None = None) -> None:
        """Raise 401 unless Slack signed this body recently and it was not seen before."""
        now = time.time() if now is None else now
        # Seconds since 1970 are 10 digits; 309 would overflow the float subtraction below (a 500).
        if not timestamp or not sig or not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
            raise HTTPException(401, "missing or malformed X-Slack-Signature / X-Slack-Request-Timestamp")
        if abs(now - int(timestamp)) > WINDOW:
            raise HTTPException(401, "X-Slack-Request-Timestamp is more than 5 minutes off: a replay, or a clock off")
        if not hmac.compare_digest(
            sig.encode("utf-8", "surrogateescape"), signature(self._secret, timestamp, body).encode()
        ):
            raise HTTPException(401, "wrong X-Slack-Signature (is ONCALL_MEMORY_SLACK_SIGNING_SECRET the app's?)")
        if not self._replays.first_time(sig, now):
            raise HTTPException(401, "this signed request was already received: a replay")

    # -- the slash command -----------------------------------------------------------------------------

    def command(self, form: dict[str, str]) -> dict[str, Any]:
        """The answer to `/oncall-memory <alert text>`: in the response when quick, else on the response_url."""
        text = form.get("text", "").strip()
        if not text or text.lower() == "help":
            return _ephemeral(
                f"Paste the alert after the command, e.g. `{escape(form.get('command') or '/oncall-memory')} "
                "checkout pods CrashLoopBackOff after deploy`: the past incidents most like it, what fixed them, "
                "and buttons to say whether one helped."
            )
        future = self._pool.submit(self.answer, text, share=True)
        try:
            return future.result(timeout=ANSWER_WITHIN)
        except FutureTimeout:
            url = form.get("response_url", "")
            future.add_done_callback(lambda done: self._follow_up(url, _result(done)))
            return _ephemeral("Looking through past incidents… the answer follows here in a moment.")

    def answer(self, text: str, *, share: bool) -> dict[str, Any]:
        """The message for this alert text: its neighbours each with feedback buttons, and (ephemeral) a
        button to share it in the channel."""
        try:
            alert = Alert(text=text)  # redacted here, where it enters
        except ValueError as exc:
            return _ephemeral(f"Cannot look that up: {escape(clip(str(exc), 300))}")
        try:
            lookup = self.memory.similar(alert, limit=self._limit)
        except OncallMemoryError as exc:
            return _ephemeral(f"The memory cannot answer now: {escape(clip(str(exc), 500))}")
        title = clip(alert.text.splitlines()[0] if alert.text.strip() else "alert", 140)
        message = job_slack(title, [Answer(title=title, count=1, lookup=lookup)], extra=self.buttons())
        if share:
            share_button = {
                "type": "button",
                "action_id": SHARE,
                "text": {"type": "plain_text", "text": "Share in channel"},
                "value": clip(alert.text, MAX_VALUE),
            }
            message["blocks"] = message["blocks"][:49] + [{"type": "actions", "elements": [share_button]}]
        return {"response_type": "ephemeral", **message}

    def buttons(self) -> Extra:
        """Blocks under each suggestion: "Helped" and "Not related", carrying the offer's token."""

        def blocks(lookup: Lookup, n: Neighbour) -> list[dict[str, Any]]:
            token = self.memory.offer(lookup, n.id)
            if token is None:
                return []
            return [
                {
                    "type": "actions",
                    "elements": [
                        _button(HELPED, f"Helped ({n.id})", token, style="primary"),
                        _button(NOT_RELATED, f"Not related ({n.id})", token),
                    ],
                }
            ]

        return blocks

    # -- buttons ---------------------------------------------------------------------------------------

    def interaction(self, payload: dict[str, Any]) -> None:
        """A button pressed: record the verdict (or share the answer), and tell the user on the response_url."""
        if payload.get("type") != "block_actions":
            return
        user: dict[str, Any] = payload["user"] if isinstance(payload.get("user"), dict) else {}
        user_id = str(user.get("id") or "")
        mention = f"<@{user_id}>" if _USER_ID.fullmatch(user_id) else escape(clip(str(user.get("name") or "?"), 80))
        url = str(payload.get("response_url") or "")
        for action in payload.get("actions") or []:
            if not isinstance(action, dict):
                continue
            action_id, value = action.get("action_id"), str(action.get("value") or "")
            if action_id in VERDICTS:
                self._pool.submit(self._verdict, url, value, VERDICTS[str(action_id)], user_id or "unknown", mention)
            elif action_id == SHARE and value:
                self._pool.submit(self._share, url, value, mention)

    def _verdict(self, url: str, token: str, verdict: str, user_id: str, mention: str) -> None:
        try:
            suggested, changed = self.memory.feedback.record_offered(
                token[:64], verdict, who=f"slack:{clip(user_id, 40)}", ref="slack"
            )
        except OncallMemoryError as exc:
            self._follow_up(url, _ephemeral(f"Not recorded: {escape(clip(str(exc), 300))}"))
            return
        self.memory.calibration.update()
        said = "already recorded" if not changed else "recorded"
        self._follow_up(
            url,
            _ephemeral(
                f"{said.capitalize()}: {escape(suggested)} *{verdict}* for alerts like this one ({mention}). "
                "The next lookup for an alert that reads the same shows it."
            ),
        )

    def _share(self, url: str, text: str, mention: str) -> None:
        message = self.answer(text, share=False)
        message["response_type"] = "in_channel"
        message["blocks"] = message["blocks"][:49] + [
            {"type": "context", "elements": [{"type": "mrkdwn", "text": f"shared by {mention}"}]}
        ]
        self._follow_up(url, {**message, "replace_original": False})

    # -- response_url ----------------------------------------------------------------------------------

    def allowed(self, url: str) -> bool:
        """Slack's own hosts over HTTPS, or the configured Slack API's origin (a proxy, a test double)."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return False
        if parts.username or parts.password:
            return False
        return (parts.scheme == "https" and parts.hostname in SLACK_HOSTS and parts.port in (None, 443)) or (
            parts.scheme,
            parts.netloc,
        ) == self._own

    def _follow_up(self, url: str, body: dict[str, Any]) -> None:
        if not self.allowed(url):
            log.warning("not following a Slack response_url outside Slack's hosts: %s", clip(url, 100))
            return
        try:
            response = self._http.post(url, json=body)
        except httpx.HTTPError as exc:
            log.warning("Slack response_url post failed: %s", type(exc).__name__)
            return
        if response.status_code >= 300:
            log.warning("Slack refused a response_url post: HTTP %s %s", response.status_code, response.text[:200])


def _button(action_id: str, label: str, value: str, *, style: str | None = None) -> dict[str, Any]:
    button = {"type": "button", "action_id": action_id, "text": {"type": "plain_text", "text": clip(label, 75)}}
    return {**button, "value": value, **({"style": style} if style else {})}


def _ephemeral(text: str) -> dict[str, Any]:
    return {"response_type": "ephemeral", "text": text}


def _result(done: Future) -> dict[str, Any]:
    try:
        return done.result()
    except Exception as exc:  # noqa: BLE001 - the user is told, the log has the rest
        log.exception("a Slack command's lookup failed")
        return _ephemeral(f"The memory could not answer: {type(exc).__name__}")
