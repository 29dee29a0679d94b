"""Store contract: the same behaviour from every backend (edge, local mode, and a server when QDRANT_URL is set)."""

import warnings

import pytest
from conftest import BACKENDS, FIXTURES, backend_settings, make_incident, snapshot

from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.domain.lexical import sparse_vector
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.errors import ContractMismatch, StoreUnavailable
from oncall_memory.ingest.ingest import ingest
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store


def fixtures():
    return list(read_jsonl(FIXTURES / "incidents.jsonl"))


def test_upsert_count_hashes_and_idempotent_reupsert(store):
    ingest(fixtures(), store, FakeEmbedder())
    assert store.count() == 64
    before = snapshot(store)
    ids = list(before)[:3]
    assert set(store.stored_hashes(ids + ["00000000-0000-0000-0000-000000000000"])) == set(ids)
    again = FakeEmbedder()
    report = ingest(fixtures(), store, again)
    assert report.unchanged == 64 and again.calls == []
    assert snapshot(store) == before


def test_payload_replacement_keeps_the_vectors(store):
    ingest([make_incident(status="open")], store, FakeEmbedder())
    ((pid, before),) = snapshot(store).items()
    ingest([make_incident(status="resolved")], store, FakeEmbedder())
    after = snapshot(store)[pid]
    assert after[1:] == before[1:] and '"status": "resolved"' in after[0]


@pytest.mark.parametrize(
    "filters,expected",
    [
        (Filters(env="payments-prod"), lambda p: p["env"] == "payments-prod"),
        (Filters(component_tags=["dns", "networking"]), lambda p: {"dns", "networking"} <= set(p["component_tags"])),
        (Filters(since="2026-06-01", until="2026-09-01"), lambda p: "2026-06-01" <= p["opened_at"] < "2026-09-01"),
        (Filters(flavor="gke", service="reporting"), lambda p: p["flavor"] == "gke" and p["service"] == "reporting"),
        (Filters(severity="info"), lambda p: p.get("severity") == "info"),
    ],
)
def test_filters_return_exactly_the_matching_incidents(store, filters, expected):
    memory = Memory(store, FakeEmbedder(), Settings(data_dir=":memory:"))
    memory.ingest(fixtures())
    text = "incident outage error failing pods"
    query_terms = set(sparse_vector(text).indices)
    matching = {p["id"]: p for _, p, _ in store.points() if expected(p)}
    assert matching  # the case tests something
    # A big enough limit returns every matching point by meaning (each has a dense vector), only those
    # sharing a word with the alert by words, and the union of both when fused.
    with_words = {i for i, p in matching.items() if query_terms & set(sparse_vector(p["text"]).indices)}
    for mode, wanted in (("dense", set(matching)), ("lexical", with_words), ("hybrid", set(matching))):
        got = {
            n.id for n in memory.similar(Alert(text=text), filters=filters, limit=100, mode=mode, rank=False).neighbours
        }
        assert got == wanted, mode


def test_signature_matches_are_exact(store):
    ingest(fixtures(), store, FakeEmbedder())
    hits = store.signature_matches("<env> kafka consumer lag alert - <env>: lag increasing")
    assert sorted(h.payload["id"] for h in hits) == ["INC-1045", "INC-1048", "INC-1049"]
    assert store.signature_matches("no such signature") == []


def test_the_contract_is_checked_on_open(store):
    ingest([make_incident()], store, FakeEmbedder(dimension=64))
    with pytest.raises(ContractMismatch, match="fake-bow \\(64 dims\\).*other \\(32 dims\\)"):
        store.ensure_collection("other", 32)


def test_a_new_dimension_under_the_same_model_name_is_a_mismatch(store):
    # The realistic mistake: text-embedding-3-* with another `dimensions`, the model name unchanged.
    ingest([make_incident()], store, FakeEmbedder(dimension=64))
    with pytest.raises(ContractMismatch, match="fake-bow \\(64 dims\\).*fake-bow \\(32 dims\\)"):
        store.check_contract("fake-bow", 32)
    with pytest.raises(ContractMismatch):
        store.ensure_collection("fake-bow", 32)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "local"])
def test_reopen_keeps_everything(backend, tmp_path):
    settings = backend_settings(backend, tmp_path)
    store = open_store(settings)
    ingest(fixtures(), store, FakeEmbedder())
    before = snapshot(store)
    store.close()
    reopened = open_store(settings)
    try:
        assert reopened.count() == 64 and snapshot(reopened) == before
        reopened.check_contract("fake-bow", 64)
    finally:
        if backend == "server":
            reopened.drop()
        reopened.close()


def test_edge_store_has_one_owner(tmp_path):
    settings = backend_settings("edge", tmp_path)
    first = open_store(settings)
    try:
        with pytest.raises(StoreUnavailable, match="open in another process"):
            open_store(settings)
    finally:
        first.close()
    open_store(settings).close()  # released on close


class _Recording:
    """A qdrant-client that notes how collections are created and does it in local mode (no server here)."""

    def __init__(self):
        from qdrant_client import QdrantClient

        self._client = QdrantClient(":memory:")
        self.created: dict = {}

    def create_collection(self, name, **kwargs):
        self.created = kwargs
        return self._client.create_collection(name, **kwargs)

    def __getattr__(self, name):
        return getattr(self._client, name)


def test_a_server_collection_gets_the_cluster_layout_and_the_index_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("ONCALL_MEMORY_QDRANT_SHARDS", "6")
    monkeypatch.setenv("ONCALL_MEMORY_QDRANT_REPLICAS", "2")
    settings = Settings(data_dir=tmp_path, embedder="fake", qdrant_url="http://127.0.0.1:1", collection="c")
    store = open_store(settings)  # a client is made without connecting
    store._client.close()
    store._client = recording = _Recording()
    with warnings.catch_warnings():  # local mode says (once per process) that it ignores payload indexes
        warnings.simplefilter("ignore")
        store.ensure_collection("fake", 1536)
    made = recording.created
    assert (made["shard_number"], made["replication_factor"], made["on_disk_payload"]) == (6, 2, False)
    assert made["vectors_config"]["meaning"].on_disk is True
    scalar = made["quantization_config"].scalar
    assert (scalar.type.value, scalar.always_ram) == ("int8", True)
    assert made["hnsw_config"].m == 16
    assert store.contract()["dimension"] == 1536


def test_local_mode_gets_no_cluster_layout(tmp_path):
    store = open_store(Settings(data_dir=":memory:", embedder="fake", qdrant_shards=4))
    store._client.close()
    store._client = recording = _Recording()
    store.ensure_collection("fake", 8)
    assert "shard_number" not in recording.created and "quantization_config" not in recording.created


def test_the_payload_carries_the_words_of_the_sparse_vector(store):
    ingest(fixtures(), store, FakeEmbedder())
    for _, payload, vectors in store.points(with_vectors=True):
        assert payload["terms"] == vectors["words"].indices


def test_points_stored_before_payloads_carried_their_words_rank_the_same(store):
    ingest(fixtures(), store, FakeEmbedder())
    memory = Memory(store, FakeEmbedder(), Settings(data_dir=":memory:", embedder="fake"))
    alert = Alert(text="checkout pods crash looping after a bad config change", service="checkout")
    before = memory.similar(alert, limit=10)
    old = {pid: {k: v for k, v in payload.items() if k != "terms"} for pid, payload, _ in store.points()}
    store.replace_payloads(old)  # as an earlier version wrote them; the sparse vectors stay
    assert not any("terms" in payload for _, payload, _ in store.points())
    after = memory.similar(alert, limit=10)
    assert [(n.id, n.score, n.reasons) for n in after.neighbours] == [
        (n.id, n.score, n.reasons) for n in before.neighbours
    ]
