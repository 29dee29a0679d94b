"""The Slack app against Slack's published shapes: requests signed as Slack signs them (slack-sdk's
`SignatureVerifier` makes the signatures), slash-command and block_actions payloads as Slack sends them
(form-encoded), chat.postMessage and response_url played by pytest-httpserver, every message's blocks
parsed and validated by slack-sdk's Block Kit models."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
import yaml
from conftest import FIXTURES, ROOT
from local_client import TestClient
from pydantic import SecretStr
from slack_sdk.models.blocks import Block
from slack_sdk.signature import SignatureVerifier
from werkzeug import Request, Response

from oncall_memory.domain.alert import Alert
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.integrations.slack.app import SlackApp, signature
from oncall_memory.integrations.slack.targets import SlackBot
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store
from oncall_memory.targets import DeliveryError

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
BOT_TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"
CHANNEL = "C0ALERTS1"
ALERT = "IPsec tunnel to card processor down"
AWS_KEY = "AKIAZ7Q3WXJ5M2LKTR4P"


class FakeSlack:
    """Slack's Web API (chat.postMessage) and response_urls, as documented: a bearer bot token, `ok` in every
    answer, errors as `{"ok": false, "error": ...}` with HTTP 200, and at most 50 valid blocks."""

    def __init__(self, httpserver):
        self.server = httpserver
        self.messages: list[dict] = []
        self.responses: list[dict] = []
        self.errors: list[str] = []  # chat.postMessage answers `{"ok": false, "error": e}` for each, first
        self.lock = threading.Lock()
        httpserver.expect_request("/api/chat.postMessage", method="POST").respond_with_handler(self.post_message)
        httpserver.expect_request("/actions/T1/1/r", method="POST").respond_with_handler(self.on_response)
        httpserver.expect_request("/commands/T1/1/r", method="POST").respond_with_handler(self.on_response)

    def on_response(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        valid_message(body)
        with self.lock:
            self.responses.append(body)
        return Response("ok", status=200)

    def url(self, kind: str = "actions") -> str:
        return self.server.url_for(f"/{kind}/T1/1/r")

    def post_message(self, request: Request) -> Response:
        if request.headers.get("Authorization") != f"Bearer {BOT_TOKEN}":
            return self._json({"ok": False, "error": "invalid_auth"})
        body = json.loads(request.get_data())
        if self.errors:
            return self._json({"ok": False, "error": self.errors.pop(0)})
        if body.get("channel") != CHANNEL:
            return self._json({"ok": False, "error": "channel_not_found"})
        valid_message(body)
        with self.lock:
            self.messages.append(body)
        return self._json(
            {"ok": True, "channel": CHANNEL, "ts": "1764480000.000100", "message": {"text": body["text"]}}
        )

    @staticmethod
    def _json(body: dict) -> Response:
        return Response(json.dumps(body), status=200, content_type="application/json")

    def wait(self, what: str, count: int = 1, timeout: float = 30) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = getattr(self, what)
            if len(got) >= count:
                return got
            time.sleep(0.02)
        raise AssertionError(f"Slack got {len(getattr(self, what))} {what}, expected {count}")


def valid_message(body: dict) -> None:
    blocks = body.get("blocks") or []
    assert len(blocks) <= 50
    for block in blocks:
        Block.parse(block).validate_json()  # slack-sdk raises on what Slack would refuse
    if body.get("text") is not None:
        assert len(body["text"]) <= 40_000


def signed(body: bytes, *, secret: str = SIGNING_SECRET, at: float | None = None) -> dict[str, str]:
    timestamp = str(int(time.time() if at is None else at))
    sig = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    return {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": sig,
    }


def command_body(text: str, response_url: str) -> bytes:
    return urlencode(
        {
            "token": "gIkuvaNzQIHg97ATvDxqgjtO",
            "team_id": "T1",
            "team_domain": "acme",
            "channel_id": CHANNEL,
            "channel_name": "alerts",
            "user_id": "U2147483697",
            "user_name": "ana",
            "command": "/oncall-memory",
            "text": text,
            "api_app_id": "A123456",
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": "13345224609.738474920.8088930838d88f008e0",
        }
    ).encode()


def press(button: dict, response_url: str, user: str = "U2147483697") -> bytes:
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": "ana", "name": "ana", "team_id": "T1"},
        "api_app_id": "A123456",
        "token": "gIkuvaNzQIHg97ATvDxqgjtO",
        "container": {
            "type": "message",
            "message_ts": "1764480000.000100",
            "channel_id": CHANNEL,
            "is_ephemeral": True,
        },
        "trigger_id": "12466734323.1395872398",
        "team": {"id": "T1", "domain": "acme"},
        "channel": {"id": CHANNEL, "name": "alerts"},
        "response_url": response_url,
        "actions": [
            {
                "action_id": button["action_id"],
                "block_id": "b1",
                "text": button["text"],
                "value": button["value"],
                "type": "button",
                "action_ts": "1764480001.000200",
            }
        ],
    }
    return urlencode({"payload": json.dumps(payload)}).encode()


def buttons(message: dict) -> list[dict]:
    return [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]


@pytest.fixture
def slack(httpserver):
    return FakeSlack(httpserver)


@pytest.fixture
def settings(httpserver, tmp_path):
    return Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        slack_signing_secret=SecretStr(SIGNING_SECRET),
        slack_bot_token=SecretStr(BOT_TOKEN),
        slack_channel=CHANNEL,
        slack_api_url=httpserver.url_for("/api"),
        post_backoff=0.01,
        post_backoff_cap=0.05,
    )


@pytest.fixture
def memory(settings):
    mem = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    mem.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    yield mem
    mem.close()


@pytest.fixture
def client(settings, memory, slack):
    with TestClient(create_app(settings, memory=memory)) as c:
        yield c


def command(client, text: str, response_url: str, **sign):
    body = command_body(text, response_url)
    return client.post("/slack/commands", content=body, headers=signed(body, **sign))


# -- the gate ------------------------------------------------------------------------------------------


def test_our_signature_is_slacks(settings):
    verifier = SignatureVerifier(SIGNING_SECRET)
    for body in (b"", b"text=hello", "text=caf\u00e9 \u2603".encode(), bytes(range(32, 127))):
        assert signature(SIGNING_SECRET, "1764480000", body) == verifier.generate_signature(
            timestamp="1764480000", body=body
        )


def test_forged_old_replayed_and_unsigned_requests_get_401(client, slack):
    body = command_body(ALERT, slack.url("commands"))
    assert (
        client.post("/slack/commands", content=body, headers=signed(body, secret="not-the-secret")).status_code == 401
    )
    stale = signed(body, at=time.time() - 6 * 60)
    assert client.post("/slack/commands", content=body, headers=stale).status_code == 401
    headers = signed(body)
    assert client.post("/slack/commands", content=body, headers=headers).status_code == 200
    replay = client.post("/slack/commands", content=body, headers=headers)
    assert replay.status_code == 401 and "replay" in replay.json()["detail"]
    unsigned = {"Content-Type": "application/x-www-form-urlencoded"}
    assert client.post("/slack/commands", content=body, headers=unsigned).status_code == 401
    odd = {**signed(body), "X-Slack-Request-Timestamp": "soon"}
    assert client.post("/slack/commands", content=body, headers=odd).status_code == 401  # not a 500
    tampered = command_body(ALERT + " and more", slack.url("commands"))
    assert client.post("/slack/commands", content=tampered, headers=signed(body)).status_code == 401
    assert client.post("/slack/interactions", content=b"payload=%7B%7D", headers=unsigned).status_code == 401


def test_without_a_signing_secret_the_slack_routes_are_off(tmp_path, memory):
    settings = Settings(data_dir=tmp_path / "off", embedder="fake")
    with TestClient(create_app(settings, memory=memory)) as c:
        body = command_body(ALERT, "https://hooks.slack.com/commands/T1/1/r")
        response = c.post("/slack/commands", content=body, headers=signed(body))
        assert response.status_code == 404 and "ONCALL_MEMORY_SLACK_SIGNING_SECRET" in response.json()["detail"]


# -- the slash command and its buttons -----------------------------------------------------------------


def test_a_signed_slash_command_answers_with_the_right_incident_and_its_buttons(client, slack, memory):
    response = command(client, ALERT, slack.url("commands"))
    assert response.status_code == 200
    message = response.json()
    valid_message(message)
    assert message["response_type"] == "ephemeral"
    first = memory.similar(Alert(text=ALERT), limit=3).neighbours[0]
    assert first.id == "INC-1025" and "INC-1025" in message["blocks"][1]["text"]["text"]
    feedback = [b for b in buttons(message) if b["action_id"] in ("helped", "not_related")]
    assert len(feedback) == 2 * 3 and "INC-1025" in feedback[0]["text"]["text"]
    (share,) = [b for b in buttons(message) if b["action_id"] == "share"]
    assert share["value"] == ALERT


def test_pressing_helped_is_recorded_and_the_next_lookup_shows_it(client, slack, memory):
    message = command(client, ALERT, slack.url("commands")).json()
    before = memory.similar(Alert(text=ALERT), limit=3).neighbours
    second = before[1]
    helped = next(b for b in buttons(message) if b["action_id"] == "helped" and second.id in b["text"]["text"])
    body = press(helped, slack.url())
    response = client.post("/slack/interactions", content=body, headers=signed(body))
    assert response.status_code == 200 and response.content == b""
    (ack,) = slack.wait("responses")
    assert ack["response_type"] == "ephemeral" and f"Recorded: {second.id} *helped*" in ack["text"]
    assert "<@U2147483697>" in ack["text"]
    after = next(n for n in memory.similar(Alert(text=ALERT), limit=3).neighbours if n.id == second.id)
    assert "helped once on similar alerts" in after.reasons
    assert after.score == pytest.approx(second.score + Settings().weights.feedback_helped, abs=1e-4)
    (row,) = memory.feedback.all()
    assert row["who"] == "slack:U2147483697" and row["ref"] == "slack" and row["suggested"] == second.id
    # Changing one's mind replaces the verdict (one per person and place), it does not add to it.
    not_related = next(
        b for b in buttons(message) if b["action_id"] == "not_related" and second.id in b["text"]["text"]
    )
    body = press(not_related, slack.url())
    assert client.post("/slack/interactions", content=body, headers=signed(body)).status_code == 200
    slack.wait("responses", 2)
    assert [r["verdict"] for r in memory.feedback.all()] == ["not related"]


def test_share_posts_the_answer_in_the_channel(client, slack):
    message = command(client, ALERT, slack.url("commands")).json()
    (share,) = [b for b in buttons(message) if b["action_id"] == "share"]
    body = press(share, slack.url())
    assert client.post("/slack/interactions", content=body, headers=signed(body)).status_code == 200
    (shared,) = slack.wait("responses")
    assert shared["response_type"] == "in_channel" and shared["replace_original"] is False
    assert "INC-1025" in shared["text"] and "shared by <@U2147483697>" in json.dumps(shared["blocks"])
    assert not [b for b in buttons(shared) if b["action_id"] == "share"]


def test_a_response_url_outside_slack_is_not_followed(client, slack, httpserver, settings, memory):
    message = command(client, ALERT, slack.url("commands")).json()
    helped = next(b for b in buttons(message) if b["action_id"] == "helped")
    body = press(helped, "https://attacker.example/collect")
    assert client.post("/slack/interactions", content=body, headers=signed(body)).status_code == 200
    deadline = time.monotonic() + 5
    while not memory.feedback.all() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert memory.feedback.all()  # the verdict counts; only the reply is not sent anywhere
    app = SlackApp(settings, memory)
    try:
        assert app.allowed("https://hooks.slack.com/actions/T1/1/r")
        assert app.allowed(slack.url())  # the configured Slack API's origin (here, the test double)
        for url in (
            "http://hooks.slack.com/actions/T1/1/r",  # not https
            "https://hooks.slack.com.attacker.example/x",
            "https://user:pw@hooks.slack.com/x",
            "https://hooks.slack.com:8443/x",
            "https://169.254.169.254/latest/meta-data/",
            "not a url",
        ):
            assert not app.allowed(url), url
    finally:
        app.close()


def test_the_alert_text_is_redacted_and_escaped(client, slack):
    text = f"<!channel> disk full & <@U999> key {AWS_KEY} on <https://evil.example|click>"
    message = command(client, text, slack.url("commands")).json()
    dumped = json.dumps(message)
    assert AWS_KEY not in dumped
    assert "<!channel>" not in message["text"] and "&lt;!channel&gt;" in message["text"]
    assert "<https://evil.example|click>" not in message["text"]


def test_a_slow_lookup_answers_looking_then_follows_on_the_response_url(settings, slack):
    class Slow(FakeEmbedder):
        delay = 0.0

        def embed(self, texts):
            time.sleep(self.delay)
            return super().embed(texts)

    embedder = Slow()
    mem = Memory(open_store(Settings(data_dir=":memory:")), embedder, settings)
    mem.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    embedder.delay = 8.0  # longer than Slack's 3 s
    try:
        with TestClient(create_app(settings, memory=mem)) as c:
            started = time.monotonic()
            response = command(c, ALERT, slack.url("commands"))
            answered = time.monotonic() - started
            assert response.json()["text"].startswith("Looking through past incidents")
            assert answered < embedder.delay  # answered before the lookup could have finished
            (late,) = slack.wait("responses", timeout=60)
            assert late["response_type"] == "ephemeral" and "INC-1025" in late["text"]
    finally:
        mem.close()


def test_help_and_empty_commands_say_how_to_use_it(client, slack):
    for text in ("", "help"):
        message = command(client, text, slack.url("commands")).json()
        assert message["response_type"] == "ephemeral" and "Paste the alert after the command" in message["text"]


# -- the app posting webhook answers -------------------------------------------------------------------


def test_webhook_answers_are_posted_by_the_app_with_buttons_that_move_the_ranking(client, slack, memory):
    body = (FIXTURES / "webhooks" / "alertmanager-group.json").read_bytes()
    response = client.post("/webhooks/alertmanager", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 202
    assert client.app.state.dispatcher.join(30)
    (message,) = slack.messages
    assert message["channel"] == CHANNEL
    feedback = [b for b in buttons(message) if b["action_id"] == "not_related"]
    assert feedback
    press_body = press(feedback[0], slack.url(), user="U0BOB")
    assert client.post("/slack/interactions", content=press_body, headers=signed(press_body)).status_code == 200
    (ack,) = slack.wait("responses")
    assert "*not related*" in ack["text"]
    (row,) = memory.feedback.all()
    assert row["who"] == "slack:U0BOB" and row["verdict"] == "not related"


def test_chat_post_message_errors_are_final_or_retried_as_slack_means_them(settings, slack):
    bot = SlackBot(SecretStr(BOT_TOKEN), CHANNEL, api_url=settings.slack.api_url)
    wrong = SlackBot(SecretStr(BOT_TOKEN), "C0NOWHERE", api_url=settings.slack.api_url)
    body = {"channel": CHANNEL, "text": "x", "blocks": []}
    try:
        bot.send(None, body)  # type: ignore[arg-type]
        assert slack.messages[-1]["text"] == "x"
        with pytest.raises(DeliveryError) as refused:
            wrong.send(None, {**body, "channel": "C0NOWHERE"})  # type: ignore[arg-type]
        assert refused.value.retry is False and "channel_not_found" in str(refused.value)
        slack.errors = ["internal_error"]
        with pytest.raises(DeliveryError) as transient:
            bot.send(None, body)  # type: ignore[arg-type]
        assert transient.value.retry is True
    finally:
        bot.close()
        wrong.close()


def test_without_an_app_the_incoming_webhook_is_used(tmp_path, httpserver):
    from oncall_memory.integrations.slack.targets import SlackWebhook, make_targets

    hook = Settings(data_dir=tmp_path, slack_webhook_url=SecretStr(httpserver.url_for("/hook")))
    assert [type(t) for t in make_targets(hook)] == [SlackWebhook]
    both = hook.replace(slack_bot_token=SecretStr(BOT_TOKEN), slack_channel=CHANNEL)
    assert [type(t) for t in make_targets(both)] == [SlackBot]


# -- the manifest --------------------------------------------------------------------------------------


def test_the_manifest_points_at_the_routes_with_the_scopes_the_app_uses():
    manifest = yaml.safe_load(Path(ROOT / "slack-app-manifest.yml").read_text())
    # Slack's documented manifest limits: app name ≤ 35, description ≤ 140, command ≤ 32 and starting with /.
    assert len(manifest["display_information"]["name"]) <= 35
    assert len(manifest["display_information"]["description"]) <= 140
    (cmd,) = manifest["features"]["slash_commands"]
    assert cmd["command"].startswith("/") and len(cmd["command"]) <= 32
    assert urlsplit(cmd["url"]).scheme == "https" and urlsplit(cmd["url"]).path == "/slack/commands"
    interactivity = manifest["settings"]["interactivity"]
    assert interactivity["is_enabled"] and urlsplit(interactivity["request_url"]).path == "/slack/interactions"
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {"commands", "chat:write"}
    app = TestClient(create_app(Settings(data_dir=ROOT / ".nowhere")))  # not started: the app is off
    for url in (cmd["url"], interactivity["request_url"]):
        answer = app.post(
            urlsplit(url).path, content=b"", headers={"Content-Type": "application/x-www-form-urlencoded"}
        )
        assert "the Slack app is off" in answer.json()["detail"]  # the route, not a 404 for a path that is not one


def test_odd_signed_payloads_get_a_4xx_or_are_ignored_never_a_500(client, slack):
    odd = [
        b"payload=not-json",
        b"payload=%5B1%2C2%5D",  # a list
        b"",
        urlencode({"payload": json.dumps({"type": "block_actions", "actions": "x", "user": "me"})}).encode(),
        urlencode({"payload": json.dumps({"type": "block_actions", "actions": [{"action_id": "helped"}]})}).encode(),
        urlencode({"payload": json.dumps({"type": "view_submission"})}).encode(),
        urlencode({"payload": "[" * 5000 + "]" * 5000}).encode(),
        b"&".join(b"f%d=1" % i for i in range(500)),
    ]
    for body in odd:
        status = client.post("/slack/interactions", content=body, headers=signed(body)).status_code
        assert status in (200, 400), (body[:40], status)
    for body in (b"text=%ff%fe", b"&".join(b"g%d=1" % i for i in range(500)), b"command=%2Fx"):
        status = client.post("/slack/commands", content=body, headers=signed(body)).status_code
        assert status in (200, 400), (body[:40], status)


@pytest.mark.parametrize("route", ["/slack/commands", "/slack/interactions"])
@pytest.mark.parametrize("timestamp", ["9" * 309, "1" * 5000, "-1", "1e9", "\u0661\u0662"])
def test_an_absurd_timestamp_is_a_401_not_a_500(client, slack, route, timestamp):
    # 309 digits once overflowed the float subtraction in the replay window: a 500, unauthenticated.
    body = b"text=dns"
    headers = {**signed(body), "X-Slack-Request-Timestamp": timestamp.encode()}
    response = client.post(route, content=body, headers=headers)
    assert response.status_code == 401 and "Timestamp" in response.json()["detail"]


def test_a_lone_surrogate_or_a_huge_number_in_a_signed_payload_is_a_400(client, slack):
    for payload in ('{"type": "block_actions", "x": "\\ud800"}', '{"type": "block_actions", "n": ' + "9" * 5000 + "}"):
        body = urlencode({"payload": payload}).encode()
        response = client.post("/slack/interactions", content=body, headers=signed(body))
        assert response.status_code == 400, response.text
