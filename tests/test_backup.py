"""A store you can verify and restore: damage the Edge files the ways disks do, see `verify` say what is
wrong (never a traceback, never a healthy count), put a backup back, and find everything as it was."""

import json
import shutil

import pytest
from conftest import FIXTURES, isolate, snapshot
from synth import synthetic_incidents  # noqa: I001  (the repository root is on sys.path under pytest)

from oncall_memory.cli import main
from oncall_memory.domain.alert import Alert
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.errors import InvalidInput, StoreDamaged
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """2,000 incidents ingested once for the module (8 s); each test damages and restores its own copy."""
    data = tmp_path_factory.mktemp("built") / "data"
    with pytest.MonkeyPatch.context() as mp:  # the per-test isolation has not run yet at module scope
        isolate(mp, data)
        with Memory.open(Settings(), embedder=FakeEmbedder()) as memory:
            memory.ingest(synthetic_incidents(2000))
            before = snapshot(memory._store)
    return data, before


@pytest.fixture
def stored(tmp_path, built):
    data, before = built
    shutil.copytree(data, tmp_path / "data")
    return Settings(data_dir=tmp_path / "data", embedder="fake"), before


def segment(settings) -> "Path":  # noqa: F821
    return next((settings.data_dir / "edge" / "incidents" / "segments").iterdir())


DAMAGE = {
    "a truncated payload page": ("payload_storage/page_0.dat", 100_000),
    "a truncated vector chunk": ("vector_storage-meaning/vectors/chunk_0.mmap", 100_000),
    "a truncated id tracker": ("mutable_id_tracker.mappings", 400),
}


def test_a_healthy_store_verifies(stored, capsys):
    assert main(["verify"]) == 0
    assert "healthy: 2000 incidents read and checked, as many as were written (2000)" in capsys.readouterr().out


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damage_is_found_by_verify_and_repaired_by_restore(stored, tmp_path, capsys, damage):
    settings, before = stored
    assert main(["backup", str(tmp_path / "backup")]) == 0
    assert "backed up 2000 incidents" in capsys.readouterr().out
    name, size = DAMAGE[damage]
    with (segment(settings) / name).open("r+b") as fh:
        fh.truncate(size)

    # A lookup says what is wrong and what to do; it does not print a traceback or answer wrongly.
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        try:
            memory.similar(Alert(text="disk pressure evictions"))
        except StoreDamaged as exc:
            assert "oncall-memory verify" in str(exc) and "oncall-memory restore" in str(exc)
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("DAMAGED") and "restore" in out
    if damage == "a truncated id tracker":
        assert "2000 incidents were written but the engine holds" in out  # the count dropped silently before

    assert main(["restore", str(tmp_path / "backup")]) == 0
    assert main(["verify"]) == 0
    capsys.readouterr()
    with open_store(settings) as store:
        assert snapshot(store) == before


def test_a_backup_that_does_not_match_its_manifest_is_refused_before_anything_is_touched(stored, tmp_path):
    settings, before = stored
    assert main(["backup", str(tmp_path / "backup")]) == 0
    points = tmp_path / "backup" / "points.jsonl.gz"
    points.write_bytes(points.read_bytes()[:-100])
    with pytest.raises(InvalidInput, match="does not match its manifest"):
        Memory.restore(settings, tmp_path / "backup")
    with open_store(settings) as store:
        assert snapshot(store) == before


def test_a_backup_restores_into_another_engine(stored, tmp_path):
    settings, before = stored
    assert main(["backup", str(tmp_path / "backup")]) == 0
    manifest = json.loads((tmp_path / "backup" / "manifest.json").read_text())
    assert manifest["count"] == 2000 and manifest["contract"]["dimension"] == 64
    local = Settings(data_dir=tmp_path / "other", embedder="fake", store="local")
    assert Memory.restore(local, tmp_path / "backup") == 2000
    with open_store(local) as store:
        assert set(snapshot(store)) == set(before)


def test_restore_works_when_the_collection_is_gone(stored, tmp_path):
    settings, before = stored
    main(["backup", str(tmp_path / "backup")])
    shutil.rmtree(settings.data_dir / "edge" / "incidents")
    assert Memory.restore(settings, tmp_path / "backup") == 2000
    with open_store(settings) as store:
        assert snapshot(store) == before


def test_a_drifting_count_is_caught_and_verify_source_names_missing_and_extra_incidents(tmp_path, capsys, monkeypatch):
    """Issue 34: after an ingest killed once its writes had landed (its count never recorded) and a full
    re-ingest, `verify` said healthy with 64 points against 24 "written": a later loss of up to 40 would
    have passed. Now the drift is reported, `--source` checks the store against the backlog (and records
    the count again when they agree), and names what is missing or extra."""
    from conftest import FIXTURES, write_jsonl

    from oncall_memory.sources.jsonl_files import read_jsonl
    from oncall_memory.store.guard import GuardedStore

    rows = [json.loads(line) for line in (FIXTURES / "incidents.jsonl").read_text().splitlines() if line.strip()]
    backlog = write_jsonl(tmp_path / "backlog.jsonl", rows)
    incidents = list(read_jsonl(backlog))
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    with monkeypatch.context() as killed:  # the writes land, the record of them does not
        killed.setattr(GuardedStore, "count_written", lambda self, new: None)
        with Memory.open(settings, embedder=FakeEmbedder()) as memory:
            memory.ingest(incidents[:40])
            memory._guard.store.record_count(24)  # what an earlier, interrupted run left recorded
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(incidents)  # the full re-ingest: 24 new, 40 unchanged
    capsys.readouterr()
    assert main(["verify", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["count"], report["expected"], report["healthy"]) == (64, 48, False), report
    assert "recorded as written" in report["drift"][0] and report["missing"] is None

    assert main(["verify", "--source", str(backlog)]) == 0
    out = capsys.readouterr().out
    assert "every incident of" in out and "it is 64 again" in out
    assert main(["verify"]) == 0
    capsys.readouterr()

    # Against a backlog with four incidents more and one fewer than the store holds.
    more = [*rows[1:], *({**rows[0], "id": f"NEW-{i}"} for i in range(4))]
    assert main(["verify", "--json", "--source", str(write_jsonl(tmp_path / "more.jsonl", more))]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["missing"] == [f"NEW-{i}" for i in range(4)] and report["extra"] == [rows[0]["id"]]
    assert any("4 incident(s) of the source are not stored: NEW-0" in p for p in report["drift"])


def test_a_backup_comes_back_with_the_layout_it_was_made_with(tmp_path):
    made = Settings(data_dir=tmp_path / "data", embedder="fake", quantization="turbo2", payload_on_disk=True)
    with Memory.open(made, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        memory.backup(tmp_path / "backup")
    elsewhere = Settings(data_dir=tmp_path / "elsewhere", embedder="fake")  # the defaults: int8, payload in RAM
    assert Memory.restore(elsewhere, tmp_path / "backup") > 30
    with Memory.open(elsewhere, embedder=FakeEmbedder()) as memory:
        stats = memory.stats()
        assert (stats["quantization"], stats["payload"]) == ("turbo2", "disk")
