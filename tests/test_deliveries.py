"""Nothing stuck: whatever a target answers or raises, a delivery is either retried with backoff until its
deadline or failed at once with the reason, and `deliveries` shows which. Each test reproduced a finding
of the service getting stuck or retrying what cannot succeed."""

import json
import time

import pytest
from conftest import FIXTURES
from local_client import TestClient
from pagerduty_fake import TOKEN as PD_TOKEN
from pagerduty_fake import FakePagerDuty, pd_incident
from pydantic import SecretStr

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.http_answers import error_message
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.outbox import Outbox
from oncall_memory.service.worker import RetryPolicy
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store

TRIGGERED = {
    "event": {
        "id": "E1",
        "event_type": "incident.triggered",
        "data": {"id": "PGR0VU2", "title": "IPsec tunnel down to the payment processor"},
    }
}


@pytest.fixture
def settings(httpserver, tmp_path):
    return Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        pagerduty_url=httpserver.url_for(""),
        pagerduty_token=SecretStr(PD_TOKEN),
        pagerduty_from_email="oncall@acme.example",
        post_backoff=0.01,
        post_backoff_cap=0.05,
        pagerduty_backoff=0.01,
    )


@pytest.fixture
def memory(settings):
    mem = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    mem.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    yield mem
    mem.close()


def serve(settings, memory):
    return TestClient(create_app(settings, memory=memory, outbox=Outbox(settings.data_dir / "outbox.sqlite3")))


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("odd", ["503+odd", "502+html"])
def test_an_odd_error_body_is_a_failed_attempt_retried_not_a_stuck_delivery(settings, memory, httpserver, odd):
    pagerduty = FakePagerDuty(incidents=[pd_incident(0, id="PGR0VU2")], note_failures=[odd, odd]).install(httpserver)
    with serve(settings, memory) as client:
        assert client.post("/webhooks/pagerduty", json=TRIGGERED).status_code == 202
        wait_for(lambda: pagerduty.posted_notes("PGR0VU2"))
    assert len(pagerduty.posted_notes("PGR0VU2")) == 1
    assert sum(1 for _, m, p in pagerduty.requests if m == "POST") == 3  # two refusals in odd shapes, then 201


def test_pagerduty_error_message_reads_any_body():
    import httpx

    for body, ctype in [
        (json.dumps({"error": "down"}), "application/json"),
        ("[1, 2]", "application/json"),
        (json.dumps({"error": {"message": "Nope", "errors": "flat"}}), "application/json"),
        ("<html>502 Bad Gateway</html>", "text/html"),
        ("", "text/plain"),
    ]:
        message = error_message(httpx.Response(503, content=body.encode(), headers={"content-type": ctype}))
        assert isinstance(message, str)
    assert error_message(httpx.Response(503, json={"error": "down"})) == "down"


def test_an_unexpected_exception_in_a_target_is_retried_with_its_reason(settings, memory, httpserver, monkeypatch):
    from oncall_memory.integrations.pagerduty import notes as notify

    pagerduty = FakePagerDuty(incidents=[pd_incident(0, id="PGR0VU2")]).install(httpserver)
    real_send, calls = notify.PagerDutyNotes.send, []

    def flaky(self, job, body):
        calls.append(1)
        if len(calls) <= 2:
            raise KeyError("a bug in the target")
        return real_send(self, job, body)

    monkeypatch.setattr(notify.PagerDutyNotes, "send", flaky)
    with serve(settings, memory) as client:
        client.post("/webhooks/pagerduty", json=TRIGGERED)
        wait_for(lambda: pagerduty.posted_notes("PGR0VU2"))
        assert client.app.state.dispatcher.join(10)
    with Outbox(settings.data_dir / "outbox.sqlite3") as box:
        (row,) = [r for r in box.deliveries() if r["target"] == "pagerduty-note"]
    assert row["state"] == "done" and row["attempts"] == 3


def test_an_unexpected_exception_past_the_deadline_fails_with_the_reason(settings, memory, httpserver, monkeypatch):
    from oncall_memory.integrations.pagerduty import notes as notify

    FakePagerDuty(incidents=[pd_incident(0, id="PGR0VU2")]).install(httpserver)
    monkeypatch.setattr(notify.PagerDutyNotes, "send", lambda self, job, body: 1 / 0)
    # The deadline runs from the claim, and the first attempt waits for the service's first lookup (0.7 s on a
    # busy CI machine, where a 0.3 s deadline left one attempt): 3 s leaves room for retries every 0.05 s.
    settings = settings.replace(delivery_deadline=3.0)
    with serve(settings, memory) as client:
        client.post("/webhooks/pagerduty", json=TRIGGERED)
        assert client.app.state.dispatcher.join(30)
    with Outbox(settings.data_dir / "outbox.sqlite3") as box:
        (row,) = [r for r in box.deliveries() if r["target"] == "pagerduty-note"]
    assert row["state"] == "failed" and "ZeroDivisionError" in row["last_error"] and row["attempts"] >= 2


def test_learning_an_incident_pagerduty_does_not_have_fails_at_once(settings, memory, httpserver):
    FakePagerDuty(incidents=[]).install(httpserver)  # answers 404 for every incident
    resolved = {"event": {"id": "E9", "event_type": "incident.resolved", "data": {"id": "PMISSING1", "title": "x"}}}
    with serve(settings, memory) as client:
        assert client.post("/webhooks/pagerduty", json=resolved).status_code == 202
        assert client.app.state.dispatcher.join(20)
        assert "degraded" not in client.get("/readyz").json()
    with Outbox(settings.data_dir / "outbox.sqlite3") as box:
        (row,) = [r for r in box.deliveries() if r["target"] == "memory"]
    assert row["state"] == "failed" and row["attempts"] == 1 and "404" in row["last_error"]


def test_the_deadline_holds_under_the_default_policy():
    # No max_retries (the default): only the deadline stops retries. Broken, a delivery would retry forever.
    policy = RetryPolicy(backoff=1.0, backoff_cap=300.0, deadline=3600.0)
    assert policy.max_retries is None
    from oncall_memory.service.worker import Dispatcher

    assert Dispatcher.gives_up(policy, attempts=50, next_at=time.time() + 10, deadline=time.time() + 5)
    assert not Dispatcher.gives_up(policy, attempts=50, next_at=time.time() + 10, deadline=time.time() + 60)


def test_backoff_doubles_up_to_its_cap():
    policy = RetryPolicy(backoff=1.0, backoff_cap=300.0)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 8.0]
    assert policy.delay(9) == 256.0 and policy.delay(10) == 300.0 and policy.delay(40) == 300.0


def test_the_outbox_forgets_old_deliveries_and_their_claims_but_not_recent_ones(tmp_path):
    from oncall_memory.domain.alert import Alert
    from oncall_memory.jobs import Job

    with Outbox(tmp_path / "outbox.sqlite3") as box:
        old, new = (Job.single(f"opsgenie:{n}", Alert(text=f"disk full {n}"), "disk full") for n in ("old", "new"))
        box.claim([old, new], {old.key: ["slack"], new.key: ["slack"]}, deadline=3600)
        box.rendered(old.key, {"slack": {"text": "x"}})
        box.rendered(new.key, {"slack": {"text": "y"}})
        for _ in range(2):
            box.delivered(box.take("slack"))
        box._db.execute("UPDATE deliveries SET updated_at = updated_at - 8 * 86400 WHERE job = ?", (old.key,))
        box._db.execute("UPDATE jobs SET created_at = created_at - 8 * 86400 WHERE key = ?", (old.key,))
        now = time.time()
        assert box.compact(done_before=now - 7 * 86400, failed_before=now - 30 * 86400) == 1
        assert [d["job"] for d in box.deliveries()] == [new.key]
        assert box.claim([new], {new.key: ["slack"]}, deadline=3600) == ([], 1)  # still a duplicate
        assert len(box.claim([old], {old.key: ["slack"]}, deadline=3600)[0]) == 1  # long gone: new again


def test_the_first_services_ledger_is_carried_into_the_outbox(settings, memory, httpserver):
    import sqlite3

    pagerduty = FakePagerDuty(incidents=[pd_incident(0, id="PGR0VU2")]).install(httpserver)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    ledger = sqlite3.connect(settings.data_dir / "enrich.sqlite3")
    ledger.executescript(
        "CREATE TABLE jobs (key TEXT PRIMARY KEY, job TEXT NOT NULL, status TEXT NOT NULL, updated_at TEXT NOT NULL,"
        " detail TEXT); CREATE TABLE deliveries (key TEXT NOT NULL, target TEXT NOT NULL, at TEXT NOT NULL,"
        " PRIMARY KEY (key, target));"
    )
    for key, incident, status in (("pagerduty:PGR0VU2", "PGR0VU2", "pending"), ("pagerduty:PDONE1", "PDONE1", "done")):
        job = {
            "key": key,
            "alert": {"text": "IPsec tunnel down"},
            "title": "IPsec tunnel down",
            "pagerduty_incident": incident,
        }
        ledger.execute(
            "INSERT INTO jobs VALUES (?, ?, ?, '2026-11-01T00:00:00Z', NULL)", (key, json.dumps(job), status)
        )
    ledger.commit()
    ledger.close()
    with serve(settings, memory) as client:
        wait_for(lambda: pagerduty.posted_notes("PGR0VU2"))  # the pending job is delivered after the upgrade
        done_again = {"event": {"id": "E2", "event_type": "incident.triggered", "data": {"id": "PDONE1", "title": "x"}}}
        assert client.post("/webhooks/pagerduty", json=done_again).json()["duplicates"] == 1
    assert (settings.data_dir / "enrich.sqlite3.migrated").exists() and not (
        settings.data_dir / "enrich.sqlite3"
    ).exists()


def test_a_job_an_outbox_kept_from_before_the_record_field_is_still_its_integrations():
    """Jobs name what they are about in `record` (issue 53: no field per vendor). An outbox written before
    kept `<vendor>_incident` / `<vendor>_issue`: read back, the job still goes to its pager's note and its
    tracker's learner, and to no other integration's."""
    import zlib

    from oncall_memory.service.outbox import _stored_job

    item = {"key": "pagerduty:P1", "alert": {"text": "IPsec tunnel down"}, "title": "IPsec tunnel down"}
    lookup = {"key": "pagerduty:P1", "items": [item], "kind": "lookup", "group": None, "pagerduty_incident": "P1"}
    lookup |= {"jira_issue": None, "incident_io_incident": None, "gitlab_issue": None}
    job = _stored_job(zlib.compress(json.dumps(lookup).encode()))
    assert job.record == "P1" and job.record_of("pagerduty") == "P1" and job.record_of("jira") is None
    learn = {"key": "jira-learn:OPS-7:e1", "items": [{**item, "key": "jira-learn:OPS-7:e1"}], "kind": "learn"}
    learn |= {"pagerduty_incident": None, "jira_issue": "OPS-7"}
    assert _stored_job(json.dumps(learn)).record_of("jira") == "OPS-7"
    assert json.loads(job.model_dump_json())["record"] == "P1"  # written back in the new field only
    assert "pagerduty_incident" not in json.loads(job.model_dump_json())


def test_a_group_claims_only_its_alerts_never_claimed_each_once_past_a_statements_bound(tmp_path):
    # Claimed in one read and one write per group (`Outbox._claimed`), in chunks of `CHUNK` keys: a group
    # larger than a chunk, an alert twice in one post, an alert an earlier post claimed.
    from oncall_memory.domain.alert import Alert
    from oncall_memory.jobs import Item, Job
    from oncall_memory.service.outbox import CHUNK

    def group(*keys: str) -> Job:
        items = [Item(key=k, alert=Alert(text=f"disk full on {k}"), title=k) for k in keys]
        return Job(key="alertmanager:{}:{storm}", items=items)

    many = [f"alertmanager:{n:05d}:t0" for n in range(CHUNK * 2 + 7)]
    with Outbox(tmp_path / "outbox.sqlite3") as box:
        first, _ = box.claim([group("alertmanager:early:t0")], {"alertmanager:{}:{storm}": ["slack"]}, deadline=60)
        recorded, duplicates = box.claim(
            [group(*many, many[3], "alertmanager:early:t0", many[-1])],
            {"alertmanager:{}:{storm}": ["slack"]},
            deadline=60,
        )
        assert duplicates == 0 and len(recorded) == 1
        assert [i.key for i in recorded[0].items] == many  # each once, in the order sent; the early one left out
        claims = dict(box._db.execute("SELECT alert, job FROM claims").fetchall())
        assert len(claims) == len(many) + 1
        assert {claims[k] for k in many} == {recorded[0].key} and claims["alertmanager:early:t0"] == first[0].key
        assert box.claim([group(*many[:10])], {"alertmanager:{}:{storm}": ["slack"]}, deadline=60) == ([], 1)
