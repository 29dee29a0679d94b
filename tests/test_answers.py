"""Issue 84: what every alert was answered, visible where the operator looks, whether or not any target is
set; and the alert families with nothing on record (the coverage report)."""

from __future__ import annotations

import json
import logging
import os
import re

from conftest import FIXTURES, serving
from local_client import TestClient

from oncall_memory.cli import main
from oncall_memory.domain.incident import Incident
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

GROUP = (FIXTURES / "webhooks" / "alertmanager-group.json").read_bytes()
JSON = {"Content-Type": "application/json"}


def firing(name: str, summary: str, fingerprint: str, at: str = "2026-12-08T00:00:00Z") -> dict:
    return {
        "version": "4",
        "status": "firing",
        "groupKey": f'{{}}:{{alertname="{name}"}}',
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": name, "cluster": "shop-prod"},
                "annotations": {"summary": summary},
                "startsAt": at,
                "fingerprint": fingerprint,
            }
        ],
    }


def test_an_alert_posted_nowhere_is_answered_and_kept_through_a_restart(tmp_path, capsys, caplog):
    caplog.set_level(logging.INFO, logger="oncall_memory")
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        with TestClient(create_app(settings, memory=memory)) as client:
            assert client.post("/webhooks/alertmanager", content=GROUP, headers=JSON).status_code == 202
            assert client.app.state.dispatcher.join()
            answers = client.get("/answers").json()
            page = client.get("/").text
    crash = next(a for a in answers if a["family"] == "KubePodCrashLooping")
    assert crash["pager"] == "alertmanager" and crash["posted_to"] == [] and crash["deliveries"] == {}
    assert crash["first"][0]["id"] == "INC-1002" and crash["first"][0]["confidence"] == crash["confidence"] == "high"
    assert "KubePodCrashLooping" in page and "INC-1002" in page and "nowhere: kept here only" in page
    # the log line names the first incident and how sure it is
    assert any(
        re.search(r"answered alertmanager:.*KubePodCrashLooping.*INC-1002 \(high\)", r.getMessage())
        for r in caplog.records
    )
    # after a restart, with no service running: the CLI reads the answer log the service kept
    assert main(["answers", "--json"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert [a["headline"] for a in kept] == [a["headline"] for a in answers]
    assert main(["answers"]) == 0
    out = capsys.readouterr().out
    assert "KubePodCrashLooping" in out and "high   INC-1002" in out and "posted to: nowhere (kept here only)" in out
    # and a service started again on the same data dir shows them too
    with Memory.open(settings, embedder=FakeEmbedder()) as memory, TestClient(create_app(settings, memory=memory)) as c:
        assert [a["headline"] for a in c.get("/answers").json()] == [a["headline"] for a in answers]
        assert "KubePodCrashLooping" in c.get("/alerts").text


def test_the_answers_say_where_each_was_posted(tmp_path, httpserver):
    httpserver.expect_request("/hook").respond_with_data("ok")
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", slack_webhook_url=httpserver.url_for("/hook"))
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        with TestClient(create_app(settings, memory=memory)) as client:
            client.post("/webhooks/alertmanager", content=GROUP, headers=JSON)
            assert client.app.state.dispatcher.join()
            answers = client.get("/answers").json()
    assert answers and all(a["posted_to"] == ["slack"] for a in answers)
    assert {a["deliveries"]["slack"] for a in answers} <= {"done", "pending", "sending"}


def test_answers_and_coverage_go_through_a_running_service(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["ingest", str(FIXTURES / "incidents.jsonl")]) == 0
    settings = Settings(data_dir=data, embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        app = create_app(settings, memory=memory)
        with serving(app) as url:
            (data / "service.json").write_text(json.dumps({"url": url, "pid": os.getpid()}))
            zk = firing("ZookeeperEnsembleSplitBrain", "zookeeper quorum lost between datacenters", "zk1")
            import httpx

            assert httpx.post(f"{url}/webhooks/alertmanager", json=zk).status_code == 202
            assert app.state.dispatcher.join()
            capsys.readouterr()
            assert main(["answers", "--json"]) == 0
            (answer,) = json.loads(capsys.readouterr().out)
            assert answer["family"] == "ZookeeperEnsembleSplitBrain" and answer["confidence"] == "low"
            assert main(["coverage", "--json"]) == 0
            (family,) = json.loads(capsys.readouterr().out)
            assert (
                family["family"] == "ZookeeperEnsembleSplitBrain" and family["low"] == 1 and family["written"] is None
            )
            assert main(["coverage", "--written", "ZookeeperEnsembleSplitBrain"]) == 0  # a write: the local token
            assert main(["coverage", "--written", "NoSuchRule"]) == 2
            capsys.readouterr()
            assert main(["coverage"]) == 0
            assert "written" in capsys.readouterr().out


def test_a_family_with_nothing_on_record_leaves_the_coverage_list_once_its_incident_is_ingested(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    zk = firing("ZookeeperEnsembleSplitBrain", "zookeeper ensemble split brain, quorum lost", "zk1")
    vault = firing("VaultSealed", "vault sealed after restart, unseal keys needed", "v1")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        with TestClient(create_app(settings, memory=memory)) as client:
            for body in (zk, vault):
                assert client.post("/webhooks/alertmanager", json=body).status_code == 202
            assert client.app.state.dispatcher.join()
            listed = {f["family"]: f for f in client.get("/coverage").json()}
            assert set(listed) == {"ZookeeperEnsembleSplitBrain", "VaultSealed"}
            assert "oncall_memory_alert_families_nothing_close 2.0" in client.get("/metrics").text
            assert "ZookeeperEnsembleSplitBrain" in client.get("/alerts").text
            # the team writes the incident for one of them; it fires again
            memory.ingest(
                [
                    Incident(
                        id="INC-2001",
                        title="ZooKeeper ensemble split brain: quorum lost between datacenters",
                        root_cause="zookeeper ensemble split brain after the inter-datacenter link flapped; quorum lost",
                        error_signature="ZookeeperEnsembleSplitBrain quorum lost",
                    )
                ]
            )
            again = firing(
                "ZookeeperEnsembleSplitBrain",
                "zookeeper ensemble split brain, quorum lost",
                "zk1",
                "2026-12-08T01:00:00Z",
            )
            assert client.post("/webhooks/alertmanager", json=again).status_code == 202
            assert client.app.state.dispatcher.join()
            latest = client.get("/answers").json()[0]
            assert latest["first"][0]["id"] == "INC-2001" and latest["confidence"] != "low"
            assert [f["family"] for f in client.get("/coverage").json()] == ["VaultSealed"]


def test_the_answer_log_is_bounded(tmp_path):
    from oncall_memory.service.answer_log import Answered, AnswerLog

    book = AnswerLog(str(tmp_path / "answers.sqlite3"), keep=5)
    for i in range(12):
        book.record(
            [
                Answered(
                    at=float(i),
                    pager="p",
                    job=f"p:{i}",
                    headline=f"h{i}",
                    family=f"f{i % 3}",
                    count=1,
                    confidence="low",
                )
            ]
        )
    assert [a.job for a in book.recent()] == [f"p:{i}" for i in range(11, 6, -1)]
    assert {f.family: f.low for f in book.uncovered()} == {"f0": 4, "f1": 4, "f2": 4}
    book.close()


def test_log_lines_carry_their_time_and_json_is_one_object_a_line():
    import io
    import logging.config

    from oncall_memory.log_format import formatter, uvicorn_config

    record = logging.LogRecord("oncall_memory.x", logging.WARNING, __file__, 1, "answered %s", ("INC-1",), None)
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARNING oncall_memory.x: answered INC-1",
        formatter("text").format(record),
    )
    line = json.loads(formatter("json").format(record))
    assert line["level"] == "WARNING" and line["logger"] == "oncall_memory.x" and line["message"] == "answered INC-1"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["time"])
    # uvicorn's own loggers (`serve`) write in the same format
    stream = io.StringIO()
    config = uvicorn_config("json")
    config["handlers"]["line"]["stream"] = stream
    logging.config.dictConfig(config)
    try:
        logging.getLogger("uvicorn.error").info("Application startup complete.")
        assert json.loads(stream.getvalue())["message"] == "Application startup complete."
    finally:
        for name in ("uvicorn", "uvicorn.access"):
            logging.getLogger(name).handlers.clear()
            logging.getLogger(name).propagate = True
