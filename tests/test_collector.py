"""The cyclic collector held off while a webhook's post becomes its jobs (a storm's post allocates a few
hundred thousand objects that live until it is answered), and as it was once every post is through,
whatever the post's fate."""

import gc
import threading

import pytest
from conftest import FIXTURES
from local_client import TestClient

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.integrations.alertmanager.webhook import AlertmanagerHook
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.collector import held_off
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_runs_again_only_once_the_last_post_in_flight_is_through(collector_on):
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with held_off():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with held_off():
            second_in.set()
            first_out.wait(5)
            seen["after the first left"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"after the first left": False}
    assert gc.isenabled()


def test_a_collector_someone_turned_off_stays_off():
    was = gc.isenabled()
    gc.disable()
    try:
        with held_off():
            pass
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_a_post_is_read_with_the_collector_off_and_leaves_it_on_whatever_its_answer(collector_on, monkeypatch):
    during = []
    read = AlertmanagerHook.jobs

    def jobs(self, body, settings, known):
        during.append(gc.isenabled())
        return read(self, body, settings, known)

    monkeypatch.setattr(AlertmanagerHook, "jobs", jobs)
    settings = Settings(data_dir=":memory:", embedder="fake")
    memory = Memory(open_store(settings), FakeEmbedder(), settings)
    memory.ingest(list(read_jsonl(FIXTURES / "incidents.jsonl")))
    alert = {
        "status": "firing",
        "labels": {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "checkout-6c9d7f-abcde"},
        "annotations": {"summary": "checkout pods crash looping after the deploy"},
        "startsAt": "2026-12-04T03:11:00Z",
        "fingerprint": "a1b2c3d4e5f60718",
    }
    with TestClient(create_app(settings, memory=memory)) as client:
        good = client.post("/webhooks/alertmanager", json={"version": "4", "groupKey": "g", "alerts": [alert]})
        assert good.status_code == 202, good.text
        assert gc.isenabled()
        wrong = client.post("/webhooks/alertmanager", json={"version": "4", "alerts": [{"status": "firing"}]})
        assert wrong.status_code == 422, wrong.text
        assert gc.isenabled()
        broken = client.post(
            "/webhooks/alertmanager", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert broken.status_code == 400
        assert gc.isenabled()
    memory.close()
    assert during == [False, False]
