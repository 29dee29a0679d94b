"""The fault suite: each finding reproduced with a real fault, and nothing lost.

- kill -9 of an ingest at random points: a re-run leaves the store identical to a clean ingest;
- kill -9 of `serve` while a PagerDuty note is in flight: after the restart the note exists exactly once;
- a 429 storm from PagerDuty is waited out; a poison incident and a 1,000-alert group are in
  test_poison.py and test_service.py; a slow target in test_service.py.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time

import httpx
import pytest
from conftest import ROOT, snapshot, write_jsonl
from pagerduty_fake import TOKEN, FakePagerDuty, pd_incident
from pydantic import SecretStr
from synth import synthetic_rows  # noqa: I001

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.integrations.pagerduty.backlog import PagerDutySource
from oncall_memory.memory import Memory
from oncall_memory.orchestration.schedule import free_port
from oncall_memory.settings import Settings
from oncall_memory.sources import Window
from oncall_memory.store.engines import open_store

pytestmark = pytest.mark.fault
DIM = 256


def cli(data, *argv, **popen):
    env = {
        **os.environ,
        "ONCALL_MEMORY_DATA_DIR": str(data),
        "ONCALL_MEMORY_EMBEDDER": "fake",
        "ONCALL_MEMORY_EMBED_DIM": str(DIM),
        "ONCALL_MEMORY_EMBED_BATCH_SIZE": "16",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "oncall_memory.cli", *argv],
        env={**env, **popen.pop("env", {})},
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


@pytest.mark.long
def test_kill_9_of_an_ingest_at_random_points_loses_nothing(tmp_path):
    backlog = write_jsonl(tmp_path / "backlog.jsonl", synthetic_rows(3000))
    reference = tmp_path / "reference"
    assert cli(reference, "ingest", str(backlog), "--json").wait(300) == 0
    with open_store(Settings(data_dir=reference, embedder="fake")) as store:
        expected = snapshot(store)

    data, rng, kills = tmp_path / "killed", random.Random(11), 0
    for _ in range(4):
        proc = cli(data, "ingest", str(backlog), "--json")
        time.sleep(rng.uniform(0.8, 3.0))  # past the imports, somewhere in the batches
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(60)
    assert kills >= 2  # the faults were injected, not dodged by a fast run
    finish = cli(data, "ingest", str(backlog), "--json")
    out, err = finish.communicate(timeout=300)
    assert finish.returncode == 0, err
    assert json.loads(out)["rejected"] == 0
    with open_store(Settings(data_dir=data, embedder="fake")) as store:
        got = snapshot(store)
    assert len(got) == 3000 and got == expected  # count and every hash, payload and vector exact
    verify = cli(data, "verify")
    assert verify.wait(120) == 0, verify.stdout.read()


def test_kill_9_of_serve_while_a_note_is_in_flight_gives_one_note_after_the_restart(tmp_path, httpserver):
    data = tmp_path / "data"
    with Memory.open(Settings(data_dir=data, embedder="fake", embed_dim=DIM), embedder=FakeEmbedder(DIM)) as memory:
        memory.ingest(list(_fixture_incidents()))
    pagerduty = FakePagerDuty(incidents=[pd_incident(0, id="PKILL01")]).install(httpserver)
    pagerduty.note_delay = 30  # PagerDuty stores the note, then takes its time answering: we die meanwhile
    port = free_port()
    env = {
        "ONCALL_MEMORY_PAGERDUTY_URL": httpserver.url_for(""),
        "ONCALL_MEMORY_PAGERDUTY_TOKEN": TOKEN,
        "ONCALL_MEMORY_PAGERDUTY_FROM_EMAIL": "oncall@acme.example",
        "ONCALL_MEMORY_POST_BACKOFF": "0.1",
        "ONCALL_MEMORY_POST_TIMEOUT": "60",
    }
    hook = {"event": {"event_type": "incident.triggered", "data": {"id": "PKILL01", "title": "IPsec tunnel down"}}}

    serve = cli(data, "serve", "--port", str(port), env=env)
    try:
        _wait_ready(port)
        assert httpx.post(f"http://127.0.0.1:{port}/webhooks/pagerduty", json=hook, timeout=10).status_code == 202
        deadline = time.monotonic() + 30
        while not pagerduty.posted_notes("PKILL01") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pagerduty.posted_notes("PKILL01")  # the note is in; the answer is not
    finally:
        serve.send_signal(signal.SIGKILL)
        serve.wait(30)

    pagerduty.note_delay = 0
    serve = cli(data, "serve", "--port", str(port), env=env)
    try:
        _wait_ready(port)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            states = json.loads(
                subprocess.run(
                    [sys.executable, "-m", "oncall_memory.cli", "deliveries", "--json"],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    env={**os.environ, "ONCALL_MEMORY_DATA_DIR": str(data)},
                ).stdout
                or "[]"
            )
            if states and all(s["state"] == "done" for s in states):
                break
            time.sleep(0.2)
        assert states and all(s["state"] == "done" for s in states), states
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(30)
    assert len(pagerduty.posted_notes("PKILL01")) == 1  # read back after the crash: not posted twice
    assert ("GET", "/incidents/PKILL01/notes") in [(m, p) for _, m, p in pagerduty.requests]


def test_a_429_storm_from_pagerduty_is_waited_out(httpserver):
    from datetime import datetime, timezone

    fake = FakePagerDuty(incidents=[pd_incident(i) for i in range(3)], throttle=25, throttle_reset="0").install(
        httpserver
    )
    from oncall_memory.integrations.pagerduty import PagerDutyAPI

    source = PagerDutySource(
        PagerDutyAPI(SecretStr(TOKEN), base_url=httpserver.url_for(""), backoff=0.01, max_retries=2)
    )
    window = Window(datetime(2026, 11, 1, tzinfo=timezone.utc), datetime(2026, 12, 1, tzinfo=timezone.utc))
    got = list(source.incidents(window))
    assert sorted(i.id for i in got) == ["P00000", "P00001", "P00002"]
    assert len(fake.requests) >= 25 + 7  # every 429 answered by waiting, none counted as a failure


def _fixture_incidents():
    from oncall_memory.sources.jsonl_files import read_jsonl

    return read_jsonl(ROOT / "fixtures" / "incidents.jsonl")


def _wait_ready(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("serve did not start")
