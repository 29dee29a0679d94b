"""The service facing strangers: every chat message escaped and inside Slack's limits, every route that
should be authenticated is, no input makes a 500 (schema-driven fuzzing included), names and ids
cannot reach outside their place."""

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import schemathesis
from conftest import FIXTURES, make_incident, serving
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from local_client import TestClient
from pydantic import SecretStr, ValidationError
from slack_sdk.models.blocks import Block

from oncall_memory.answer.render import note_text
from oncall_memory.cli import main
from oncall_memory.domain.alert import Alert
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.integrations.pagerduty.notes import NOTE_LIMIT as PAGERDUTY_NOTE_LIMIT
from oncall_memory.integrations.slack.render import slack_message
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.api_docs import openapi_schema
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store

JSON = {"Content-Type": "application/json"}
NOTES = re.compile(r"^/incidents/[A-Z0-9]+/notes$")


def memory_with(incidents, **settings):
    memory = Memory(
        open_store(Settings(data_dir=":memory:")), FakeEmbedder(), Settings(data_dir=":memory:", **settings)
    )
    memory.ingest(incidents)
    return memory


def slack_bodies(httpserver):
    return [json.loads(req.get_data()) for req, _ in httpserver.log if req.path.startswith("/slack")]


def assert_valid_slack(message: dict) -> None:
    """slack-sdk's own Block Kit models are the source of truth for the limits."""
    assert len(message["blocks"]) <= 50
    for raw in message["blocks"]:
        Block.parse(raw).validate_json()
        text = raw.get("text", {}).get("text", "")
        assert len(text) <= (150 if raw["type"] == "header" else 3000)


# -- escaping and limits ---------------------------------------------------------------------------

HOSTILE = "<!channel> <@U012AB3CD> <https://evil.example/login|dashboard> & friends"


def test_slack_messages_are_escaped_from_the_alert_and_from_stored_incidents():
    memory = memory_with(
        [
            make_incident(
                id="EVIL",
                title=f"crash looping {HOSTILE}",
                url="https://evil.example/x|click here",
                fixes_attempted=[{"action": f"restart {HOSTILE}", "outcome": "resolved"}],
            )
        ]
    )
    alert = Alert(text=f"crash looping {HOSTILE}")
    message = slack_message(alert.text, memory.similar(alert))
    assert_valid_slack(message)
    # Everything Slack parses as mrkdwn: the notification text and every mrkdwn block. The header is
    # plain_text, which Slack never parses for mentions or links.
    assert message["blocks"][0]["text"]["type"] == "plain_text"
    mrkdwn = json.dumps([message["text"], message["blocks"][1:]])
    for raw in ("<!channel>", "<@U012AB3CD>", "<https://evil.example/login|dashboard>", "<https://evil.example/x|"):
        assert raw not in mrkdwn
    section = message["blocks"][1]["text"]["text"]
    assert "&lt;!channel&gt;" in section and "&amp; friends" in section
    assert section.startswith("*1. EVIL*")  # a URL holding "|" is not made a link


def test_a_long_neighbour_is_cut_not_lost_and_each_fix_is_printed_once():
    long_fix = "drain the node and " * 200  # 3,800 characters
    incidents = [
        make_incident(
            id=f"L{i}",
            title="disk pressure evictions " + "x" * 5000,
            fixes_attempted=[
                {"action": long_fix + str(i), "outcome": "resolved"},
                {"action": "restart kubelet", "outcome": "no-op"},
            ],
        )
        for i in range(10)
    ]
    memory = memory_with(incidents)
    lookup = memory.similar(Alert(text="disk pressure evictions " + "y" * 9000), limit=10)
    message = slack_message("disk pressure " * 40, lookup)
    assert_valid_slack(message)
    assert message["blocks"][0]["text"]["text"].endswith("…")
    for block in message["blocks"][1:]:
        text = block["text"]["text"]
        assert text.count("restart kubelet") == 1  # in "tried without effect", not again in "why"
        assert "fixed by:" in text and "…" in text
    note = note_text("disk pressure", lookup)
    assert len(note) <= PAGERDUTY_NOTE_LIMIT and note.endswith("…")
    assert len(message["text"]) <= 3000


# -- authentication --------------------------------------------------------------------------------


@pytest.fixture
def memory():
    mem = memory_with(list(read_jsonl(FIXTURES / "incidents.jsonl")))
    yield mem
    mem.close()


def app_client(memory, **settings):
    base = dict(data_dir=":memory:", embedder="fake")
    return TestClient(create_app(Settings(**{**base, **settings}), memory=memory))


def test_the_api_and_its_docs_need_the_api_token(memory):
    with app_client(memory, api_token=SecretStr("api-secret")) as c:
        for path in ("/similar?text=dns", "/docs", "/redoc", "/openapi.json"):
            assert c.get(path).status_code == 401, path
            assert c.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401, path
            assert c.get(path, headers={"Authorization": "Bearer api-secret"}).status_code == 200, path
        assert c.post("/similar", json={"alert": {"text": "dns"}}).status_code == 401
        assert c.get("/healthz").status_code == 200 and c.get("/readyz").status_code == 200  # probes stay open


@pytest.mark.parametrize(
    "headers,status",
    [
        ({}, 401),
        ({"X-Oncall-Memory-Token": "wrong"}, 401),
        ({"X-Oncall-Memory-Token": "og-secret"}, 202),
        ({"Authorization": "Bearer og-secret"}, 202),
        ({"Authorization": "Basic " + base64.b64encode(b"opsgenie:og-secret").decode()}, 202),
        ({"Authorization": "Basic !!!not-base64"}, 401),
    ],
)
def test_the_opsgenie_webhook_needs_its_shared_secret(memory, headers, status):
    with app_client(memory, opsgenie_token=SecretStr("og-secret")) as c:
        response = c.post(
            "/webhooks/opsgenie",
            content=(FIXTURES / "webhooks" / "opsgenie-create.json").read_bytes(),
            headers={**JSON, **headers},
        )
        assert response.status_code == status


@pytest.mark.parametrize("header", ["authorization", "x-pagerduty-signature", "x-oncall-memory-token"])
def test_odd_bytes_in_a_credential_are_a_401_not_a_500(memory, header):
    with app_client(
        memory,
        api_token=SecretStr("t"),
        opsgenie_token=SecretStr("t"),
        alertmanager_token=SecretStr("t"),
        pagerduty_webhook_secret=SecretStr("t"),
    ) as c:
        odd = {header: "Bearer \xe9\xff\x00 caf\xe9".encode("latin-1")}
        for method, path in (
            ("POST", "/webhooks/pagerduty"),
            ("POST", "/webhooks/alertmanager"),
            ("POST", "/webhooks/opsgenie"),
            ("GET", "/similar?text=x"),
        ):
            response = c.request(method, path, content=b"{}", headers={**JSON, **odd})
            assert response.status_code == 401, (path, response.text)


def test_serve_refuses_a_public_address_without_the_api_token_and_nothing_else(capsys):
    assert main(["serve", "--host", "0.0.0.0", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert "refusing to serve on 0.0.0.0" in err
    assert "/similar" in err and "ONCALL_MEMORY_API_TOKEN" in err and "ONCALL_MEMORY_ALLOW_UNAUTHENTICATED" in err
    assert "/webhooks/" not in err  # a pager the team does not use is off, not a reason to refuse


def test_facing_the_network_a_pager_route_is_on_only_with_its_secret(tmp_path):
    from local_client import TestClient

    from oncall_memory.service import create_app

    settings = Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        host="0.0.0.0",
        api_token=SecretStr("api"),
        alertmanager_token=SecretStr("am-secret"),
    )
    with TestClient(create_app(settings)) as client:
        for route, variable in (
            ("/webhooks/pagerduty", "ONCALL_MEMORY_PAGERDUTY_WEBHOOK_SECRET"),
            ("/webhooks/opsgenie", "ONCALL_MEMORY_OPSGENIE_TOKEN"),
        ):
            off = client.post(route, content=b"{}", headers=JSON)
            assert off.status_code == 404 and variable in off.text, (route, off.text)
        assert (
            client.post("/webhooks/alertmanager", content=b"{}", headers=JSON).status_code == 401
        )  # on: needs its token
    with TestClient(create_app(settings.replace(host="127.0.0.1"))) as client:  # on one machine: open, as before
        assert client.post("/webhooks/opsgenie", content=b"{}", headers=JSON).status_code == 422


# -- no input makes a 500 --------------------------------------------------------------------------


def deep(levels: int) -> bytes:
    return b'{"a": ' * levels + b"1" + b"}" * levels


@pytest.mark.parametrize("path", ["/webhooks/pagerduty", "/webhooks/alertmanager", "/webhooks/opsgenie", "/similar"])
@pytest.mark.parametrize("levels", [40, 1000, 100_000])
def test_deeply_nested_json_is_a_400(memory, path, levels):
    with app_client(memory) as c:
        response = c.post(path, content=deep(levels), headers=JSON)
        assert response.status_code == 400 and "nests deeper" in response.json()["detail"]


ODD_JSON = {
    "lone surrogate": b'{"title": "disk full \\ud800 on db-1", "text": "\\udfff"}',
    "lone surrogate in a key": b'{"\\udc00": 1}',
    "5,000-digit integer": b'{"n": ' + b"9" * 5000 + b"}",
    "5,000-digit float": b'{"n": 1.' + b"9" * 5000 + b"}",
    "NaN": b'{"n": NaN}',
    "Infinity": b'{"n": -Infinity}',
}


@pytest.mark.parametrize("path", ["/webhooks/pagerduty", "/webhooks/alertmanager", "/webhooks/opsgenie", "/similar"])
@pytest.mark.parametrize("name", ODD_JSON)
def test_json_no_text_can_hold_is_a_400_before_any_work(memory, path, name):
    # Each was a 500 with a traceback, some unauthenticated: a surrogate failed where the text was first
    # encoded, 5,000 digits hit Python's int-to-str limit, NaN is not JSON.
    with app_client(memory) as c:
        response = c.post(path, content=ODD_JSON[name], headers=JSON)
        assert response.status_code == 400, response.text
        assert "surrogate" in response.text or "number" in response.text or "not JSON" in response.text


def test_blank_titles_are_refused_or_ignored_with_a_message(memory):
    with app_client(memory) as c:
        pd = {"event": {"event_type": "incident.triggered", "data": {"id": "PBLANK1", "title": "   "}}}
        response = c.post("/webhooks/pagerduty", json=pd)
        assert response.status_code == 422 and "title" in response.json()["detail"]
        og = {"action": "Create", "alert": {"alertId": "a1", "message": " \t "}}
        response = c.post("/webhooks/opsgenie", json=og)
        assert response.status_code == 422 and "message" in response.json()["detail"]
        am = {
            "version": "4",
            "alerts": [
                {
                    "status": "firing",
                    "labels": {"alertname": "  "},
                    "annotations": {},
                    "startsAt": "2026-11-29T00:00:00Z",
                    "fingerprint": "f1",
                }
            ],
        }
        assert c.post("/webhooks/alertmanager", json=am).json() == {"accepted": 0, "duplicates": 0, "ignored": 1}


def test_a_pagerduty_id_that_is_not_an_id_never_reaches_the_rest_path(memory, httpserver):
    settings = dict(
        pagerduty_url=httpserver.url_for(""), pagerduty_token=SecretStr("pd"), pagerduty_from_email="a@b.example"
    )
    with app_client(memory, **settings) as c:
        for bad in ("../../users/PXYZ", "P1/notes", "p1", "P1?x=1", "P" * 40):
            pd = {"event": {"event_type": "incident.triggered", "data": {"id": bad, "title": "disk full"}}}
            response = c.post("/webhooks/pagerduty", json=pd)
            assert response.status_code == 422 and "id" in response.json()["detail"], bad
        c.app.state.dispatcher.join()
    assert httpserver.log == []


@pytest.mark.parametrize("name", ["", "../../x", "/etc", "a/b", "a\nb", "x" * 65, "."])
def test_a_collection_name_that_is_a_path_is_refused_before_anything_is_touched(tmp_path, monkeypatch, capsys, name):
    monkeypatch.setenv("ONCALL_MEMORY_COLLECTION", name)
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 2
    assert "collection must be 1 to 64 of A-Z a-z 0-9 _ -" in capsys.readouterr().err
    assert not any(tmp_path.rglob("*.json"))  # nothing was created anywhere
    with pytest.raises(ValidationError):
        Settings(collection=name)


# -- schema-driven fuzzing -------------------------------------------------------------------------

FUZZ_SETTINGS = Settings(data_dir=":memory:", embedder="fake")
FUZZ_APP = create_app(FUZZ_SETTINGS)
schema = schemathesis.openapi.from_dict(openapi_schema(FUZZ_APP))


@pytest.fixture(scope="module")
def fuzz_client():
    mem = memory_with(list(read_jsonl(FIXTURES / "incidents.jsonl")))
    app = create_app(FUZZ_SETTINGS, memory=mem)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client
    mem.close()


@schema.parametrize()
@hypothesis_settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_gets_a_5xx(case, fuzz_client):
    kwargs = case.as_transport_kwargs(base_url="http://127.0.0.1")
    request = {k: kwargs[k] for k in ("method", "url", "params", "headers") if kwargs.get(k) is not None}
    if "json" in kwargs:
        request["content"] = json.dumps(kwargs["json"]).encode()
        request.setdefault("headers", {})["Content-Type"] = "application/json"
    elif kwargs.get("data") is not None:
        request["content"] = kwargs["data"] if isinstance(kwargs["data"], bytes) else str(kwargs["data"]).encode()
    response = fuzz_client.request(**request)
    assert response.status_code < 500, (case.method, case.path, response.status_code, response.text[:300])
    assert fuzz_client.get("/healthz").status_code == 200


def test_a_blank_secret_is_no_secret(monkeypatch):
    # docker-compose's `${VAR:-}` sets VAR to "": that must read as unset, not as the token "" that an empty
    # Authorization header would match.
    from oncall_memory.service.auth import exposure, pagers_off

    monkeypatch.setenv("ONCALL_MEMORY_ALERTMANAGER_TOKEN", "")
    monkeypatch.setenv("ONCALL_MEMORY_SLACK_SIGNING_SECRET", "  ")
    monkeypatch.setenv("ONCALL_MEMORY_API_TOKEN", " ")
    settings = Settings(host="0.0.0.0")
    assert settings.alertmanager.token is None and settings.slack.signing_secret is None
    assert ("/webhooks/alertmanager", "ONCALL_MEMORY_ALERTMANAGER_TOKEN") in pagers_off(settings)
    assert any("ONCALL_MEMORY_API_TOKEN" in line for line in exposure(settings))


@pytest.mark.long
def test_the_api_keeps_its_contract_under_schemathesis_with_every_check(memory, tmp_path):
    """schemathesis (its CLI, as an operator would run it) against a real server's own /openapi.json, every
    check on: statuses, content types and bodies as documented, schema-valid requests taken and others
    refused, no 5xx. Bounded by seed and examples (about 30 s here)."""
    cli = Path(sys.executable).parent / "schemathesis"
    token = "contract-token-1"
    app = create_app(Settings(data_dir=tmp_path / "data", embedder="fake", api_token=SecretStr(token)), memory=memory)
    with serving(app) as url:
        run = subprocess.run(
            [str(cli), "run", f"{url}/openapi.json", "-H", f"Authorization: Bearer {token}", "--checks", "all"]
            + ["--max-examples", "40", "--seed", "1", "--workers", "1", "--no-color"],
            capture_output=True,
            text=True,
            timeout=170,
            cwd=tmp_path,
        )
    assert run.returncode == 0, run.stdout[-4000:]
    operations = sum(len(methods) for methods in openapi_schema(app)["paths"].values())
    tested, generated = re.search(r"Tested: (\d+)", run.stdout), re.search(r"(\d+) generated", run.stdout)
    assert tested and int(tested[1]) == operations and generated and int(generated[1]) > 20 * operations
