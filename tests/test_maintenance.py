"""migrate (local mode -> edge, no embedding) and reindex (new model, swapped in only when complete)."""

import pytest
from conftest import FIXTURES, assert_same_points, snapshot

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.errors import EmbeddingFailed, InvalidInput
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store

migrate = Memory.migrate


def reindex(settings, embedder):
    with Memory.open(settings, embedder=embedder) as memory:
        return memory.reindex()


def fixtures():
    return list(read_jsonl(FIXTURES / "incidents.jsonl"))


def build(settings, embedder=None):
    with Memory.open(settings, embedder=embedder or FakeEmbedder()) as memory:
        memory.ingest(fixtures())
        return snapshot(memory._store)


def contents(settings):
    with open_store(settings) as store:
        return store.contract(), snapshot(store)


def test_migrate_copies_every_point_without_embedding(tmp_path):
    local = Settings(data_dir=tmp_path, embedder="fake", store="local")
    before = build(local)
    edge = local.model_copy(update={"store": "edge"})
    assert migrate(edge) == 64
    contract, after = contents(edge)
    assert_same_points(after, before)  # same ids, payloads, dense and sparse vectors
    assert contract["embed_model"] == "fake-bow" and contract["dimension"] == 64
    assert_same_points(contents(local)[1], before)  # the source is untouched
    with pytest.raises(InvalidInput, match="already holds 64 incidents"):
        migrate(edge)


def test_migrate_without_a_local_store_says_so(tmp_path):
    with pytest.raises(InvalidInput, match="no local-mode collection"):
        migrate(Settings(data_dir=tmp_path, embedder="fake"))


@pytest.mark.parametrize("store", ["edge", "local"])
def test_reindex_rebuilds_with_the_new_model_from_the_stored_incidents(tmp_path, store):
    settings = Settings(data_dir=tmp_path, embedder="fake", store=store, embed_batch_size=16)
    before = build(settings)
    new = FakeEmbedder(dimension=32, model="fake-32")
    report = reindex(settings, new)
    assert report.new == 64 and report.embedding_calls == 4
    contract, after = contents(settings)
    assert (contract["embed_model"], contract["dimension"]) == ("fake-32", 32)
    assert set(after) == set(before)
    assert [json for json, *_ in after.values()] == [json for json, *_ in before.values()]  # same payloads


@pytest.mark.parametrize("store", ["edge", "local"])
def test_a_reindex_that_fails_halfway_leaves_the_old_collection_untouched(tmp_path, store):
    settings = Settings(data_dir=tmp_path, embedder="fake", store=store, embed_batch_size=16)
    before = build(settings)
    with pytest.raises(EmbeddingFailed):
        reindex(settings, FakeEmbedder(dimension=32, model="fake-32", fail_calls=[3]))
    contract, after = contents(settings)
    assert (contract["embed_model"], contract["dimension"]) == ("fake-bow", 64)
    assert_same_points(after, before)
    # and the half-built collection is gone: a second attempt starts clean and succeeds
    assert reindex(settings, FakeEmbedder(dimension=32, model="fake-32")).new == 64
