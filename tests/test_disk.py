"""A full disk is a clear error, never a crash: on a small tmpfs (really mounted for the test, as root;
skipped with the reason otherwise) `ingest`, `stats`, `verify` and `similar` exit 1 with a message naming
the data dir and what to do, write nothing half-done, and the read-only commands do not grow the store.

Before this, each died of SIGBUS (exit 135) printing nothing: the embedded engine maps preallocated
(sparse) files into memory, and on a memory-backed filesystem even opening the store fills them."""

import errno
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

from oncall_memory.datadir import DataDir, filesystem_type, holes, stored_bytes
from oncall_memory.errors import DiskFull

ENV = {k: v for k, v in os.environ.items() if not k.startswith("ONCALL_MEMORY_")}


def cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**ENV, "ONCALL_MEMORY_DATA_DIR": str(data_dir), "ONCALL_MEMORY_EMBEDDER": "fake"}
    return subprocess.run(
        [sys.executable, "-m", "oncall_memory.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def small_tmpfs(tmp_path):
    """Mount a tmpfs of the given size (MB) and yield its path; unmounted after the test."""
    mounted: list[Path] = []

    def mount(size_mb: int) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
        point = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
        point.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(point)], capture_output=True, text=True
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def test_an_ingest_onto_a_full_disk_says_so_and_writes_nothing(small_tmpfs):
    data = small_tmpfs(40) / "data"
    done = cli(data, "ingest", str(FIXTURES / "incidents.jsonl"))
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert f"no space left on {data}" in done.stderr and "ONCALL_MEMORY_DATA_DIR" in done.stderr
    assert not (data / "edge" / "incidents.contract.json").exists()  # no collection half-made


def test_read_only_commands_on_a_store_too_big_for_the_disk_say_so_and_leave_it_as_it_was(tmp_path, small_tmpfs):
    built = tmp_path / "built"
    assert cli(built, "ingest", str(FIXTURES / "incidents.jsonl")).returncode == 0
    data = small_tmpfs(40) / "data"
    subprocess.run(["cp", "-a", "--sparse=always", str(built), str(data)], check=True)  # holes stay holes
    before = stored_bytes(data)
    for command in (["stats"], ["verify"], ["similar", "dns timeouts"]):
        done = cli(data, *command)
        assert done.returncode == 1, (command, done.returncode, done.stderr)
        assert f"no space left on {data}" in done.stderr, (command, done.stderr)
    assert stored_bytes(data) == before  # nothing grew


def test_with_room_everything_works_on_the_same_kind_of_disk(small_tmpfs):
    data = small_tmpfs(600) / "data"
    assert cli(data, "ingest", str(FIXTURES / "incidents.jsonl")).returncode == 0
    for command in (["stats"], ["verify"], ["similar", "dns timeouts"]):
        assert cli(data, *command).returncode == 0, command


def test_the_data_dir_knows_its_filesystem_and_the_room_it_needs(tmp_path):
    data = DataDir(tmp_path)
    assert data.free_bytes() > 0 and data.memory_backed() == (filesystem_type(tmp_path) in ("tmpfs", "ramfs"))
    with pytest.raises(DiskFull, match=f"no space left on {tmp_path}.*ONCALL_MEMORY_DATA_DIR"):
        data.need(data.free_bytes() + (1 << 40), "store 1 incident")
    sparse = tmp_path / "sparse"
    with sparse.open("wb") as fh:
        fh.truncate(64 << 20)
    assert holes(tmp_path) >= 60 << 20  # preallocated, not written
    assert DataDir(":memory:").free_bytes() is None


def test_a_service_whose_data_dir_fills_refuses_webhooks_with_503_and_keeps_answering(small_tmpfs, httpserver):
    """The data dir (outbox, sessions, feedback) on a 16 MB tmpfs, filled to the last byte under a running
    service: a webhook is a 503 with Retry-After and nothing claimed, lookups answer, /readyz says not
    ready and why, /metrics shows the free bytes; with room again the same post is taken whole."""
    from local_client import TestClient
    from pydantic import SecretStr

    from oncall_memory.embedders.fake import FakeEmbedder
    from oncall_memory.memory import Memory
    from oncall_memory.service import create_app
    from oncall_memory.settings import Settings
    from oncall_memory.sources.jsonl_files import read_jsonl
    from oncall_memory.store.engines import open_store

    data = small_tmpfs(16) / "data"
    httpserver.expect_request("/slack/hook", method="POST").respond_with_data("ok")
    settings = Settings(
        data_dir=data, embedder="fake", min_free_mb=1, slack_webhook_url=SecretStr(httpserver.url_for("/slack/hook"))
    )
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    base = {"status": "firing", "startsAt": "2026-11-30T03:11:00Z", "labels": {"alertname": "KubePodCrashLooping"}}
    storm = {
        "version": "4",
        "groupKey": '{}:{alertname="KubePodCrashLooping"}',
        "alerts": [
            {
                **base,
                "fingerprint": f"{i:016x}",
                "annotations": {"summary": f"pod checkout-{i} crash looping, exit code 137 after start {i}" * 3},
            }
            for i in range(300)
        ],
    }
    with TestClient(create_app(settings, memory=memory)) as client:
        assert client.get("/readyz").status_code == 200
        filler = data / "filler"
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * (1 << 16))
                    f.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        refused = client.post("/webhooks/alertmanager", json=storm)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "60"
        assert "cannot be written" in refused.json()["detail"]
        answered = client.get("/similar", params={"text": "pods crash looping"})
        assert answered.status_code == 200 and answered.json(), answered.text
        ready = client.get("/readyz")
        assert ready.status_code == 503 and "cannot be written" in ready.json()["detail"], ready.text
        free = [
            line for line in client.get("/metrics").text.splitlines() if line.startswith("oncall_memory_data_dir_free")
        ]
        assert free and float(free[0].split()[-1]) < 1 << 20, free
        filler.unlink()
        taken = client.post("/webhooks/alertmanager", json=storm)
        assert taken.status_code == 202 and taken.json() == {"accepted": 1, "duplicates": 0}, taken.text
        assert client.get("/readyz").status_code == 200


def test_every_command_on_a_read_only_data_dir_says_so_in_one_line(tmp_path):
    """A data dir mounted read-only (a bind mount, as a container's volume would be): each command was a
    Python traceback (EROFS on the store's lock file), `serve` exit 3 with one."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root (CI runs as root)")
    built = tmp_path / "built"
    assert cli(built, "ingest", str(FIXTURES / "incidents.jsonl")).returncode == 0
    data = tmp_path / "readonly"
    data.mkdir()
    bound = subprocess.run(["mount", "--bind", str(built), str(data)], capture_output=True, text=True)
    if bound.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {bound.stderr.strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(data)], check=True)
        alert = tmp_path / "alert.json"
        alert.write_text('{"text": "dns timeouts"}')
        commands = [
            ["stats"],
            ["similar", "dns timeouts"],
            ["verify"],
            ["ingest", str(FIXTURES / "incidents.jsonl")],
            ["index", "--force"],
            ["backup", str(tmp_path / "copy")],
            ["feedback", "INC-1001", "helped", "--alert", str(alert)],
            ["serve", "--port", "0"],
        ]
        for command in commands:
            done = cli(data, *command)
            assert done.returncode == 1, (command, done.returncode, done.stderr)
            assert "Traceback" not in done.stderr, (command, done.stderr)
            assert f"{data} cannot be written (read-only file system" in done.stderr, (command, done.stderr)
            assert len(done.stderr.strip().splitlines()) == 1, (command, done.stderr)
    finally:
        subprocess.run(["umount", "-l", str(data)], capture_output=True)
