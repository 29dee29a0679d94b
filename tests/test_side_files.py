"""Side files fail soft and loud: a damaged feedback store or outbox is set aside (kept for inspection),
a fresh one started, and a warning names both files and how to salvage the old one; lookups and the
service go on. Before this, either killed `serve` and `similar` with a bare `sqlite3.DatabaseError`."""

import json
import logging
import os
import subprocess
import sys

from conftest import FIXTURES, ROOT
from local_client import TestClient

from oncall_memory.answer.feedback import FeedbackStore
from oncall_memory.domain.alert import Alert
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

GARBAGE = b"this is not a database" * 300


def test_a_damaged_feedback_store_is_set_aside_and_lookups_go_on(tmp_path, caplog):
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONCALL_MEMORY_")}
    env.update(ONCALL_MEMORY_DATA_DIR=str(data), ONCALL_MEMORY_EMBEDDER="fake")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "oncall_memory.cli", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert run("ingest", str(FIXTURES / "incidents.jsonl")).returncode == 0
    (data / "feedback.sqlite3").write_bytes(GARBAGE)
    done = run("similar", "IPsec tunnel down", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["id"]
    assert "feedback store" in done.stderr and "set aside as feedback.sqlite3.damaged-" in done.stderr
    aside = list(data.glob("feedback.sqlite3.damaged-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == GARBAGE  # kept as it was, for inspection


def test_a_feedback_store_damaged_while_open_leaves_lookups_without_feedback(tmp_path, caplog):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        memory.feedback._db.close()  # what a damaged file looks like to a query: sqlite3 raises
        with caplog.at_level(logging.WARNING):
            assert memory.similar(Alert(text="IPsec tunnel down")).neighbours
        assert "lookups go on without feedback" in caplog.text


def test_a_damaged_outbox_is_set_aside_and_the_service_starts_and_serves(tmp_path, caplog):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    settings.data_dir.mkdir(parents=True)
    (settings.data_dir / "outbox.sqlite3").write_bytes(GARBAGE)
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        with caplog.at_level(logging.WARNING), TestClient(create_app(settings, memory=memory)) as client:
            assert client.get("/readyz").status_code == 200
            hook = {
                "version": "4",
                "status": "firing",
                "alerts": [
                    {
                        "status": "firing",
                        "labels": {"alertname": "KubePodCrashLooping"},
                        "annotations": {},
                        "startsAt": "2026-11-29T03:10:00Z",
                        "fingerprint": "fp1",
                    }
                ],
            }
            assert client.post("/webhooks/alertmanager", json=hook).status_code == 202
    assert "the outbox" in caplog.text and "outbox.sqlite3.damaged-" in caplog.text
    assert list(settings.data_dir.glob("outbox.sqlite3.damaged-*"))


def test_a_fresh_feedback_store_opens_quietly(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        FeedbackStore(tmp_path / "feedback.sqlite3").close()
    assert "damaged" not in caplog.text


def test_serve_removes_its_service_file_when_stopped_by_a_signal(tmp_path):
    import signal
    import time

    from oncall_memory.orchestration.schedule import free_port

    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONCALL_MEMORY_")}
    env.update(ONCALL_MEMORY_DATA_DIR=str(data), ONCALL_MEMORY_EMBEDDER="fake")
    subprocess.run(
        [sys.executable, "-m", "oncall_memory.cli", "ingest", str(FIXTURES / "incidents.jsonl")],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    serve = subprocess.Popen(
        [sys.executable, "-m", "oncall_memory.cli", "serve", "--port", str(free_port())],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (data / "service.json").exists():
            assert serve.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)
        assert json.loads((data / "service.json").read_text())["pid"] == serve.pid
        serve.send_signal(signal.SIGTERM)  # uvicorn shuts down, then re-raises the signal: no `finally` runs
        serve.wait(30)
    finally:
        serve.kill()
    assert not (data / "service.json").exists()


def test_a_service_file_left_by_a_killed_service_is_removed_by_the_next_cli(tmp_path, monkeypatch):
    from oncall_memory.cli.remote import service_url

    data = tmp_path / "data"
    data.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (data / "service.json").write_text(json.dumps({"url": "http://127.0.0.1:1", "pid": dead.pid}))
    assert service_url(Settings(data_dir=data)) is None
    assert not (data / "service.json").exists()


def test_a_copy_left_by_a_killed_index_build_is_removed_when_the_store_opens(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        leftover = memory._store.disk_path.parent / f"{settings.collection}__index"
    leftover.mkdir()
    (leftover / "segment").write_bytes(b"x" * 4096)  # what a killed build leaves: a copy of the store
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        assert memory.stats()["count"] == 64
    assert not leftover.exists()


def test_a_qdrant_server_that_does_not_answer_is_unavailable_in_words(tmp_path):
    from oncall_memory.errors import StoreUnavailable
    from oncall_memory.orchestration.schedule import free_port
    from oncall_memory.store.engines.qdrant import QdrantStore

    store = QdrantStore.server(f"http://127.0.0.1:{free_port()}", None, "incidents")
    import pytest

    with pytest.raises(StoreUnavailable, match="Qdrant server at http://127.0.0.1:.*QDRANT_URL"):
        store.count()
