"""`oncall-memory migrate --to URL`: the embedded store copied into a Qdrant server or cluster collection
created with the layout asked for, vectors and all, resumable. The target here is qdrant-client's local
mode standing in for a server (no server runs on CI); the collection settings a server would receive are
checked against qdrant-client's own REST models."""

import pytest
from conftest import FIXTURES, assert_same_points, snapshot
from qdrant_client import QdrantClient, models

from oncall_memory.cli import main
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.cluster import migrate_to
from oncall_memory.store.engines import open_edge
from oncall_memory.store.engines.qdrant import QdrantStore, collection_config


@pytest.fixture
def settings(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    return settings


def stand_in_server() -> QdrantStore:
    """A QdrantStore as `--to URL` makes it (indexes, shards, replicas), on local mode."""
    return QdrantStore(QdrantClient(":memory:"), "incidents", location="stand-in", indexes=True, shards=2, replicas=2)


def test_every_point_arrives_whole_without_embedding(settings):
    target = stand_in_server()
    with open_edge(settings) as source:
        report = migrate_to(source, target, batch=10)
        assert (report.source, report.written, report.already, report.target) == (64, 64, 0, 64)
        assert_same_points(snapshot(target), snapshot(source))  # ids, payloads and both vectors (float32 precision)
        assert target.contract()["embed_model"] == source.contract()["embed_model"]


def test_a_copy_stopped_midway_resumes_and_a_finished_one_writes_nothing(settings):
    target = stand_in_server()
    real_write, calls = target.write, []

    def dies_on_the_third_batch(points):
        calls.append(len(points))
        if len(calls) == 3:
            raise ConnectionError("connection reset by peer")
        real_write(points)

    target.write = dies_on_the_third_batch  # type: ignore[method-assign]
    with open_edge(settings) as source:
        with pytest.raises(ConnectionError):
            migrate_to(source, target, batch=10)
        assert target.count() == 20
        target.write = real_write  # type: ignore[method-assign]
        resumed = migrate_to(source, target, batch=10)
        assert (resumed.written, resumed.already, resumed.target) == (44, 20, 64)
        again = migrate_to(source, target, batch=10)
        assert (again.written, again.already) == (0, 64)
        assert_same_points(snapshot(target), snapshot(source))


def test_a_cluster_collection_gets_the_layout_asked_for_in_qdrants_own_terms():
    config = collection_config({"embed_model": "m", "dimension": 1536}, True, shard_number=6, replication_factor=2)
    body = models.CreateCollection(
        vectors=config.pop("vectors_config"), sparse_vectors=config.pop("sparse_vectors_config"), **config
    )
    assert (body.shard_number, body.replication_factor, body.on_disk_payload) == (6, 2, False)
    dense = body.vectors["meaning"]  # type: ignore[index]
    assert dense.size == 1536 and dense.on_disk is True and dense.distance == models.Distance.COSINE
    assert body.quantization_config.scalar.type == models.ScalarType.INT8
    assert body.quantization_config.scalar.always_ram is True  # int8 in RAM, originals on disk
    assert body.sparse_vectors["words"].modifier == models.Modifier.IDF  # type: ignore[index]
    # an embedded store made with TurboQuant (ONCALL_MEMORY_QUANTIZATION) keeps it on the server
    turbo = collection_config({"embed_model": "m", "dimension": 1536, "quantization": "turbo2"}, True)
    turbo.pop("sparse_vectors_config")
    body = models.CreateCollection(vectors=turbo.pop("vectors_config"), **turbo)
    assert body.quantization_config.turbo.bits == models.TurboQuantBitSize.BITS2  # type: ignore[union-attr]
    assert body.quantization_config.turbo.always_ram is True  # type: ignore[union-attr]


def test_migrate_to_says_what_is_wrong_in_one_line(settings, capsys, monkeypatch):
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("ONCALL_MEMORY_EMBEDDER", "fake")
    assert main(["migrate", "--to", "qdrant.internal:6333"]) == 2
    assert "--to takes a Qdrant server's URL" in capsys.readouterr().err
    assert main(["migrate", "--to", "http://127.0.0.1:9", "--shards", "3"]) == 1
    err = capsys.readouterr().err
    assert "127.0.0.1:9" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_a_turboquant_store_migrates_into_a_turboquant_collection(tmp_path, monkeypatch):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", quantization="turbo2")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    target, asked = stand_in_server(), []
    real_create = target._client.create_collection

    def create(name, **config):  # what a server would be asked for (local mode keeps no quantization)
        asked.append(config)
        return real_create(name, **config)

    monkeypatch.setattr(target._client, "create_collection", create)
    with open_edge(settings) as source:
        report = migrate_to(source, target, batch=10)
        assert report.target == report.source > 30
        assert_same_points(snapshot(target), snapshot(source))
    assert asked[0]["quantization_config"].turbo.bits == models.TurboQuantBitSize.BITS2
    assert target.contract()["quantization"] == "turbo2"
