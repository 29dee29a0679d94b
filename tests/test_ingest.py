import pytest
from conftest import FIXTURES, make_incident, snapshot

from oncall_memory.domain.incident import point_id
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.errors import ContractMismatch, EmbeddingFailed
from oncall_memory.ingest.ingest import ingest
from oncall_memory.sources.jsonl_files import read_jsonl


def fixtures():
    return list(read_jsonl(FIXTURES / "incidents.jsonl"))


def test_first_ingest_stores_every_incident_under_a_hash_derived_id(store, embedder):
    report = ingest(fixtures(), store, embedder, batch_size=16)
    assert (report.new, report.updated, report.unchanged, report.rejected) == (64, 0, 0, 0)
    assert report.embedding_calls == 4  # 64 incidents in batches of 16
    assert store.count() == 64
    assert point_id("jsonl", "INC-1001") in snapshot(store)


def test_rerun_of_an_unchanged_backlog_makes_zero_embedding_calls_and_changes_nothing(store):
    ingest(fixtures(), store, FakeEmbedder(), batch_size=16)
    before = snapshot(store)
    again = FakeEmbedder()
    report = ingest(fixtures(), store, again, batch_size=16)
    assert again.calls == []
    assert report.embedding_calls == 0
    assert (report.new, report.updated, report.unchanged) == (0, 0, 64)
    assert snapshot(store) == before


def test_overlapping_backlog_embeds_only_the_new_incidents(store):
    items = fixtures()
    ingest(items[:40], store, FakeEmbedder())
    later = FakeEmbedder()
    report = ingest(items[20:], store, later)
    assert (report.new, report.unchanged) == (24, 20)
    assert sum(len(c) for c in later.calls) == 24
    assert store.count() == 64


def test_changed_text_is_reembedded_once_under_the_same_id(store):
    ingest([make_incident(oncall_note="restarted")], store, FakeEmbedder())
    changed = FakeEmbedder()
    report = ingest([make_incident(oncall_note="restart did nothing; rolled back the config")], store, changed)
    assert report.updated == 1 and report.new == 0
    assert changed.calls == [["checkout pods crash looping\nrestart did nothing; rolled back the config"]]
    assert store.count() == 1
    third = FakeEmbedder()
    ingest([make_incident(oncall_note="restart did nothing; rolled back the config")], store, third)
    assert third.calls == []


def test_changed_facts_only_update_the_payload_without_embedding(store):
    ingest([make_incident(status="open")], store, FakeEmbedder())
    before = snapshot(store)
    quiet = FakeEmbedder()
    report = ingest(
        [make_incident(status="resolved", fixes_attempted=[{"action": "roll back", "outcome": "resolved"}])],
        store,
        quiet,
    )
    assert report.updated == 1 and quiet.calls == []
    after = snapshot(store)
    (pid,) = after
    assert after[pid][1:] == before[pid][1:]  # same vectors
    assert '"status": "resolved"' in after[pid][0]


def test_a_failed_embedding_call_writes_nothing_for_its_batch_and_a_rerun_completes(store):
    items = fixtures()
    failing = FakeEmbedder(fail_calls=[2])
    with pytest.raises(EmbeddingFailed) as info:
        ingest(items, store, failing, batch_size=16)
    assert store.count() == 16  # the first batch is complete; the second wrote nothing; the rest never ran
    assert info.value.report.new == 16
    retry = FakeEmbedder()
    report = ingest(items, store, retry, batch_size=16)
    assert (report.new, report.unchanged) == (48, 16)
    assert store.count() == 64


def test_a_later_line_for_the_same_incident_wins(store, embedder):
    report = ingest([make_incident(title="first"), make_incident(title="second")], store, embedder)
    assert report.new == 1 and store.count() == 1
    ((_, payload, _),) = store.points()
    assert payload["title"] == "second"


def test_the_dimension_is_a_contract(store):
    ingest([make_incident()], store, FakeEmbedder(dimension=64))
    with pytest.raises(ContractMismatch) as info:
        ingest([make_incident(id="INC-2")], store, FakeEmbedder(dimension=32, model="other-model"))
    message = str(info.value)
    assert "fake-bow (64 dims)" in message and "other-model (32 dims)" in message
    assert "oncall-memory reindex" in message
    assert store.count() == 1
