"""Scheduled runs fire on a fresh machine, with nobody triggering them (a bounded subprocess)."""

import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest
from conftest import FIXTURES

from oncall_memory.settings import Settings
from oncall_memory.store.engines import open_store


def completed_scheduled_runs(api: str) -> list[dict]:
    body = {"flow_runs": {"state": {"type": {"any_": ["COMPLETED"]}}}, "limit": 50}
    runs = httpx.post(f"{api}/flow_runs/filter", json=body, timeout=10).json()
    return [r for r in runs if r.get("auto_scheduled")]


@pytest.mark.long
def test_two_scheduled_runs_fire_by_themselves_and_the_local_server_stops_with_us(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(ONCALL_MEMORY_EMBEDDER="fake", ONCALL_MEMORY_DATA_DIR=str(tmp_path / "data"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "oncall_memory.cli", "schedule", "--path", str(FIXTURES), "--interval", "5"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    api, runs, seen = None, [], []
    try:
        deadline = time.monotonic() + 300  # a Prefect server start and two runs: ~40 s idle, much more on a busy CI box
        while api is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            seen.append(line)
            if match := re.search(r"Prefect API (http://\S+)", line):
                api = match.group(1)
        assert api, "".join(seen)
        while len(runs) < 2 and time.monotonic() < deadline:
            time.sleep(2)
            runs = completed_scheduled_runs(api)
        assert len(runs) >= 2, f"only {len(runs)} scheduled runs completed"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the schedule command did not stop on SIGTERM")
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{api}/health", timeout=2)  # the local server went down with the command
    store = open_store(Settings(data_dir=tmp_path / "data", embedder="fake"))
    try:
        assert store.count() == 68  # fixtures/: incidents.jsonl and the post-mortems
    finally:
        store.close()
