"""The enrichment service: real webhooks in, PagerDuty's REST API and Slack played by pytest-httpserver."""

import hashlib
import hmac
import json
import logging
import threading
import time

import pytest
from conftest import FIXTURES
from fastapi.testclient import TestClient
from pydantic import SecretStr
from werkzeug import Response

from oncall_memory.backlog import read_jsonl
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.ledger import Ledger
from oncall_memory.settings import Settings
from oncall_memory.stores import open_store

SECRET = "whsec-topsecret-value"
PD_TOKEN = "pd-api-token-xyz"
HOOKS = FIXTURES / "webhooks"


def body_of(name: str) -> bytes:
    return (HOOKS / name).read_bytes()


def sign(body: bytes, secret: str = SECRET) -> str:
    return "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@pytest.fixture
def settings(httpserver, tmp_path):
    return Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        pagerduty_url=httpserver.url_for(""),
        pagerduty_token=SecretStr(PD_TOKEN),
        pagerduty_from_email="oncall-memory@acme.example",
        pagerduty_webhook_secret=SecretStr(SECRET),
        slack_webhook_url=SecretStr(httpserver.url_for("/slack/T000/B000/XXXX")),
        post_backoff=0.01,
        post_max_retries=3,
    )


@pytest.fixture
def memory(settings):
    mem = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    mem.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    yield mem
    mem.close()


@pytest.fixture
def ledger(tmp_path):
    led = Ledger(tmp_path / "enrich.sqlite3")
    yield led
    led.close()


@pytest.fixture
def client(settings, memory, ledger):
    with TestClient(create_app(settings, memory=memory, ledger=ledger)) as c:
        yield c


def drain(client):
    client.app.state.enricher.join()


def notes_posted(httpserver):
    return [json.loads(req.get_data()) for req, resp in httpserver.log
            if req.path.endswith("/notes") and resp.status_code == 201]


def slack_posts(httpserver):
    return [json.loads(req.get_data()) for req, resp in httpserver.log if req.path.startswith("/slack")]


def expect_targets(httpserver, note_status=201):
    httpserver.expect_request("/incidents/PGR0VU2/notes", method="POST").respond_with_json({"note": {"id": "N1"}}, status=note_status)
    httpserver.expect_request("/slack/T000/B000/XXXX", method="POST").respond_with_data("ok")


def post_pd(client, body: bytes, signature: str | None = "sign", content_type="application/json"):
    headers = {"Content-Type": content_type}
    if signature == "sign":
        headers["X-PagerDuty-Signature"] = sign(body)
    elif signature:
        headers["X-PagerDuty-Signature"] = signature
    return client.post("/webhooks/pagerduty", content=body, headers=headers)


def test_a_signed_triggered_incident_gets_one_note_with_the_right_neighbours(client, httpserver):
    expect_targets(httpserver)
    response = post_pd(client, body_of("pagerduty-incident-triggered.json"))
    assert response.status_code == 202 and response.json()["accepted"] == 1
    drain(client)
    (note,) = notes_posted(httpserver)
    content = note["note"]["content"]
    assert content.startswith("oncall-memory: 3 similar past incident(s)")
    assert "INC-1025 IPsec tunnel to payment processor down" in content
    assert "fixed by: update peer address" in content and "tried without effect: restart strongswan pod" in content
    assert "https://example.pagerduty.com/incidents/INC-1025" in content
    req = next(r for r, _ in httpserver.log if r.path.endswith("/notes"))
    assert req.headers["Authorization"] == f"Token token={PD_TOKEN}"
    assert req.headers["From"] == "oncall-memory@acme.example"
    assert req.headers["Accept"] == "application/vnd.pagerduty+json;version=2"
    (slack,) = slack_posts(httpserver)
    assert "INC-1025" in slack["text"] and slack["blocks"][0]["type"] == "header"


def test_a_redelivery_posts_nothing_even_after_a_restart(settings, memory, ledger, httpserver):
    expect_targets(httpserver)
    body = body_of("pagerduty-incident-triggered.json")
    with TestClient(create_app(settings, memory=memory, ledger=ledger)) as c:
        post_pd(c, body)
        drain(c)
        assert post_pd(c, body).json() == {"accepted": 0, "duplicates": 1}
    restarted = Ledger(settings.data_dir.parent / "enrich.sqlite3")  # same file, new process view
    with TestClient(create_app(settings, memory=memory, ledger=restarted)) as c:
        assert post_pd(c, body).json() == {"accepted": 0, "duplicates": 1}
        drain(c)
    restarted.close()
    assert len(notes_posted(httpserver)) == 1 and len(slack_posts(httpserver)) == 1


@pytest.mark.parametrize("signature", [None, "v1=deadbeef", sign(b"other body"), "v0=" + "0" * 64])
def test_a_missing_or_wrong_signature_gets_401_and_no_note(client, httpserver, signature):
    expect_targets(httpserver)
    response = post_pd(client, body_of("pagerduty-incident-triggered.json"), signature=signature)
    assert response.status_code == 401
    drain(client)
    assert notes_posted(httpserver) == []


def test_any_signature_in_a_rotation_list_is_accepted(client, httpserver):
    expect_targets(httpserver)
    body = body_of("pagerduty-incident-triggered.json")
    header = f"{sign(body, 'old-secret')}, {sign(body)}"
    assert post_pd(client, body, signature=header).status_code == 202


def test_other_pagerduty_events_are_acknowledged_without_action(client, httpserver):
    data = json.loads(body_of("pagerduty-incident-triggered.json"))
    data["event"]["event_type"] = "incident.acknowledged"
    body = json.dumps(data).encode()
    response = post_pd(client, body)
    assert response.status_code == 202 and response.json()["ignored"] == "incident.acknowledged"
    drain(client)
    assert httpserver.log == []


def test_an_alertmanager_group_with_two_firing_and_one_resolved_makes_two_lookups(client, httpserver):
    httpserver.expect_request("/slack/T000/B000/XXXX", method="POST").respond_with_data("ok")
    response = client.post("/webhooks/alertmanager", content=body_of("alertmanager-group.json"),
                           headers={"Content-Type": "application/json"})
    assert response.json() == {"accepted": 2, "duplicates": 0}
    drain(client)
    posts = slack_posts(httpserver)
    assert len(posts) == 2
    dns = next(p for p in posts if "DNS" in p["blocks"][0]["text"]["text"])
    assert "INC-1015" in dns["text"] or "INC-1019" in dns["text"]
    again = client.post("/webhooks/alertmanager", content=body_of("alertmanager-group.json"),
                        headers={"Content-Type": "application/json"})
    assert again.json() == {"accepted": 0, "duplicates": 2}


def test_alertmanager_labels_become_facts(client, httpserver, memory):
    from oncall_memory.service.inbound import AlertmanagerWebhook, alertmanager_jobs

    hook = AlertmanagerWebhook.model_validate_json(body_of("alertmanager-group.json"))
    job = alertmanager_jobs(hook, Settings().label_facts)[0][0]
    assert job.key == "alertmanager:4f3a2b1c0d9e8f7a:2026-11-29T03:10:00Z"
    assert (job.alert.service, job.alert.env, job.alert.flavor) == ("checkout", "shop-prod", "eks")
    assert job.alert.component_tags == ["dns", "checkout"]


def test_alertmanager_bearer_token_is_enforced_when_set(settings, memory, ledger):
    settings = settings.model_copy(update={"alertmanager_token": SecretStr("am-token-1")})
    with TestClient(create_app(settings, memory=memory, ledger=ledger)) as c:
        body = body_of("alertmanager-group.json")
        assert c.post("/webhooks/alertmanager", content=body, headers={"Content-Type": "application/json"}).status_code == 401
        ok = c.post("/webhooks/alertmanager", content=body,
                    headers={"Content-Type": "application/json", "Authorization": "Bearer am-token-1"})
        assert ok.status_code == 202


def test_an_opsgenie_create_is_looked_up_once(client, httpserver):
    httpserver.expect_request("/slack/T000/B000/XXXX", method="POST").respond_with_data("ok")
    body = body_of("opsgenie-create.json")
    assert client.post("/webhooks/opsgenie", content=body, headers={"Content-Type": "application/json"}).json()["accepted"] == 1
    assert client.post("/webhooks/opsgenie", content=body, headers={"Content-Type": "application/json"}).json()["duplicates"] == 1
    drain(client)
    (post,) = slack_posts(httpserver)
    assert "INC-1056" in post["text"]  # the Docker Hub pull rate limit incident


def test_a_pager_api_500_then_201_ends_in_exactly_one_note(client, httpserver):
    httpserver.expect_oneshot_request("/incidents/PGR0VU2/notes", method="POST").respond_with_data("oops", status=500)
    expect_targets(httpserver)
    assert post_pd(client, body_of("pagerduty-incident-triggered.json")).status_code == 202
    drain(client)
    attempts = [r for r, _ in httpserver.log if r.path.endswith("/notes")]
    assert len(attempts) == 2 and len(notes_posted(httpserver)) == 1


def test_the_webhook_answers_before_the_posting_is_done(client, httpserver):
    release, finished = threading.Event(), threading.Event()

    def slow_pagerduty(request):
        release.wait(30)  # PagerDuty "hangs" until the test lets it go
        finished.set()
        return Response(json.dumps({"note": {"id": "N1"}}), status=201, content_type="application/json")

    httpserver.expect_request("/incidents/PGR0VU2/notes", method="POST").respond_with_handler(slow_pagerduty)
    httpserver.expect_request("/slack/T000/B000/XXXX", method="POST").respond_with_data("ok")
    response = post_pd(client, body_of("pagerduty-incident-triggered.json"))
    assert response.status_code == 202
    assert not finished.is_set()  # answered while the note was still being posted
    release.set()
    drain(client)
    assert finished.is_set() and len(notes_posted(httpserver)) == 1


def test_a_pager_outage_is_retried_logged_and_the_service_keeps_serving(client, httpserver, ledger, caplog):
    httpserver.expect_request("/incidents/PGR0VU2/notes", method="POST").respond_with_data("down", status=503)
    httpserver.expect_request("/slack/T000/B000/XXXX", method="POST").respond_with_data("ok")
    assert post_pd(client, body_of("pagerduty-incident-triggered.json")).status_code == 202
    drain(client)
    attempts = [r for r, _ in httpserver.log if r.path.endswith("/notes")]
    assert len(attempts) == 4  # the first try and three retries
    assert ledger.status("pagerduty:PGR0VU2") == "failed"
    assert "PagerDuty note on PGR0VU2 failed after 3 retries (HTTP 503)" in caplog.text
    assert client.get("/healthz").json() == {"status": "ok"}
    # A redelivery after the outage posts the note, and does not post to Slack a second time.
    httpserver.clear_all_handlers()
    expect_targets(httpserver)
    assert post_pd(client, body_of("pagerduty-incident-triggered.json")).json()["accepted"] == 1
    drain(client)
    assert len(notes_posted(httpserver)) == 1 and len(slack_posts(httpserver)) == 1


@pytest.mark.parametrize(
    "body,content_type,status,message",
    [
        (b"{not json", "application/json", 400, "not valid JSON"),
        (b'{"event": {"event_type": "incident.triggered"}}', "application/json", 422, "event.data is required"),
        (b'{"event": {"event_type": "incident.triggered", "data": {"id": "P1"}}}', "application/json", 422, "title is required"),
        (b"event=1", "application/x-www-form-urlencoded", 415, "application/json"),
        (b'{"pad": "' + b"x" * (1024 * 1024) + b'"}', "application/json", 413, "limit"),
    ],
)
def test_bad_bodies_get_a_4xx_that_says_what_is_wrong_and_the_service_keeps_serving(client, body, content_type, status, message):
    response = post_pd(client, body, content_type=content_type)
    assert response.status_code == status
    assert message in response.json()["detail"]
    assert client.get("/healthz").status_code == 200


def test_similar_get_and_post_return_the_cli_json(client):
    got = client.get("/similar", params={"text": "IPsec tunnel down", "env": "payments-prod", "limit": 3})
    assert got.status_code == 200
    neighbours = got.json()
    assert len(neighbours) == 3 and {n["env"] for n in neighbours} == {"payments-prod"}
    for key in ("id", "title", "score", "similarity", "age_days", "fixes_worked", "fixes_failed", "url", "reasons"):
        assert key in neighbours[0]
    posted = client.post("/similar", json={"alert": {"text": "IPsec tunnel down", "flavor": "aks"}, "limit": 10})
    assert posted.status_code == 200
    aks = [n for n in posted.json() if n["flavor"] == "aks"]
    assert aks and all("same flavor (aks)" in n["reasons"] for n in aks)
    assert client.get("/similar", params={"text": "  "}).status_code == 422
    assert client.get("/similar", params={"text": "dns", "limit": 500}).status_code == 400
    assert client.post("/similar", json={"alert": {"text": "dns"}, "region": "eu"}).status_code == 422


def test_health_and_readiness(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True and "64 incidents" in ready.json()["detail"]


def test_no_secret_reaches_a_log_line_or_a_response(client, httpserver, caplog):
    caplog.set_level(logging.DEBUG)
    httpserver.expect_request("/incidents/PGR0VU2/notes", method="POST").respond_with_data("down", status=500)
    httpserver.expect_request("/slack/T000/B000/XXXX", method="POST").respond_with_data("ok")
    body = body_of("pagerduty-incident-triggered.json")
    responses = [post_pd(client, body), post_pd(client, body, signature="v1=bad"), client.get("/readyz")]
    drain(client)
    ours = [r.getMessage() for r in caplog.records if not r.name.startswith("werkzeug")]  # not the fake Slack's own log
    seen = "\n".join(ours) + "".join(r.text for r in responses)
    assert "HTTP Request: POST [REDACTED]" in seen  # httpx did log the Slack post, scrubbed
    for secret in (SECRET, PD_TOKEN, "/slack/T000/B000/XXXX"):
        assert secret not in seen


def test_the_service_can_run_the_ingest_schedule_in_process(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", ingest_interval=0.2,
                        ingest_path=str(FIXTURES / "incidents.jsonl"))
    with TestClient(create_app(settings)) as c:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "64 incidents" not in c.get("/readyz").json()["detail"]:
            time.sleep(0.1)
        assert "64 incidents" in c.get("/readyz").json()["detail"]
        # The service owns the embedded store; a second process is told clearly, not corrupted.
        from oncall_memory.errors import StoreUnavailable

        with pytest.raises(StoreUnavailable, match="open in another process"):
            open_store(settings)
