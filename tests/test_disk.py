"""A full disk is a clear error, never a crash: on a small tmpfs (really mounted for the test, as root;
skipped with the reason otherwise) `ingest`, `stats`, `verify` and `similar` exit 1 with a message naming
the data dir and what to do, write nothing half-done, and the read-only commands do not grow the store.

Before this, each died of SIGBUS (exit 135) printing nothing: the embedded engine maps preallocated
(sparse) files into memory, and on a memory-backed filesystem even opening the store fills them."""

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
