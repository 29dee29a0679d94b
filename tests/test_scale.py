"""A memory measures its own scale (issue 50): what an alert with nothing in it scores there, and how close its
own incidents stand; confidence reads each answer's meaning against the two."""

import base64
import json
import logging
from collections import Counter
from dataclasses import asdict

import numpy as np
import pytest
from conftest import FIXTURES, make_incident

from oncall_memory.answer.confidence import CALIBRATED
from oncall_memory.answer.scale import (
    MIN_INCIDENTS,
    MIN_SPAN,
    PROBES,
    SAMPLE,
    UNMEASURED,
    WORD_SAMPLE,
    MemoryScale,
    Scale,
)
from oncall_memory.answer.told import prototype_texts
from oncall_memory.domain.alert import Alert
from oncall_memory.domain.distill import distill_alert
from oncall_memory.domain.lexical import idf, term_index
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

# A model the shipped calibration reads the standing for (the fake embedder's own gives it no weight).
READ = "all-MiniLM-L6-v2"


def open_memory(tmp_path, embedder: FakeEmbedder) -> Memory:
    return Memory.open(Settings(data_dir=tmp_path / "data", embedder="fake"), embedder=embedder)


def b64(array: np.ndarray) -> str:
    return base64.b64encode(array.tobytes()).decode()


def unit(rows) -> np.ndarray:
    m = np.asarray(rows, dtype=float)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_the_standing_is_where_meaning_lies_between_the_null_and_the_neighbours():
    scale = Scale(null=0.4, neighbours=0.8)
    assert scale.standing(0.4) == 0 and scale.standing(0.8) == pytest.approx(1)
    assert scale.standing(0.6) == pytest.approx(0.5) and scale.standing(0.3) < 0
    # Neighbours no nearer than the null (a memory of unrelated one-offs) do not divide by nothing.
    flat = Scale(null=0.5, neighbours=0.45)
    assert flat.standing(0.6) == pytest.approx(0.1 / MIN_SPAN)


def test_it_is_measured_again_once_the_memory_moved_by_a_tenth():
    scale = Scale(0.4, 0.6, incidents=1000, counted=1000, told="{}")
    assert not scale.due(1000) and not scale.due(1099) and not scale.due(901)
    assert scale.due(1100) and scale.due(900)
    assert Scale(0.4, 0.6, incidents=3).due(4)  # a small memory: every incident counts
    assert Scale(0.4, 0.6, incidents=1000).due(1000)  # measured before its words were counted
    assert Scale(0.4, 0.6, incidents=1000, counted=1000).due(1000)  # ... or its symptoms' meaning (issue 82)


def test_the_measurement_is_the_median_of_the_probes_best_and_of_the_incidents_nearest(tmp_path):
    embedder = FakeEmbedder()
    incidents = list(read_jsonl(FIXTURES / "incidents.jsonl"))
    with open_memory(tmp_path, embedder) as memory:
        memory.ingest(incidents)
        texts = [p["text"] for p in memory.payloads().values()]
        scale = memory.measure_scale()
    assert scale is not None and scale.incidents == len(texts) and scale.model == embedder.model
    # The same figures by brute force over the fake embedder's vectors, without the engine.
    stored = unit(embedder.embed(texts))
    probes = unit(embedder.embed([distill_alert(p) for p in PROBES]))
    assert scale.null == pytest.approx(np.median((probes @ stored.T).max(axis=1)), abs=1e-5)
    pairs = stored @ stored.T
    np.fill_diagonal(pairs, -np.inf)
    assert len(texts) <= SAMPLE  # every incident is in the sample here
    assert scale.neighbours == pytest.approx(np.median(pairs.max(axis=1)), abs=1e-5)


def test_the_words_are_counted_and_an_answer_s_rare_words_weigh_most(tmp_path):
    incidents = list(read_jsonl(FIXTURES / "incidents.jsonl"))
    with open_memory(tmp_path, FakeEmbedder()) as memory:
        memory.ingest(incidents)
        payloads = memory.payloads()
        scale = memory.measure_scale()
    # Every incident counted here (fewer than WORD_SAMPLE), each word by how many incidents hold it.
    held = Counter(t for p in payloads.values() for t in set(p["terms"]))
    assert scale.counted == len(payloads) <= WORD_SAMPLE
    terms, counts = scale._held_by
    assert dict(zip(terms.tolist(), counts.tolist(), strict=True)) == held
    common = max(held, key=held.__getitem__)  # the word most incidents hold
    rare = next(t for t, n in held.items() if n == 1)  # one only one holds
    unknown = term_index("qwzxv-no-incident-says-this")  # a word no incident holds
    assert unknown not in held
    alert = frozenset({common, rare, unknown})
    weights = {t: idf(len(payloads), held.get(t, 0)) for t in alert}
    assert scale.rare_share(alert, {rare}) == pytest.approx(weights[rare] / sum(weights.values()))
    # Holding the rare word says more than holding the common one, and all of them is the whole.
    assert scale.rare_share(alert, {rare}) > 2 * scale.rare_share(alert, {common})
    assert scale.rare_share(alert, {common, rare, unknown, 7}) == pytest.approx(1.0)
    assert scale.rare_share(frozenset(), {rare}) == 0.0
    # Kept and read back whole, and a memory whose words were not counted weighs them alike.
    assert Scale(**json.loads(json.dumps(asdict(scale)))).rare_share(alert, {rare}) == scale.rare_share(alert, {rare})
    assert UNMEASURED.rare_share(alert, {rare}) == pytest.approx(1 / 3)


def test_the_scale_is_kept_for_every_process_and_read_again_when_it_changes(tmp_path):
    with open_memory(tmp_path, FakeEmbedder()) as memory:
        path = tmp_path / "data" / "scale-incidents.json"
        # Another process on the same data dir (the service beside a Qdrant server) reads the same file.
        other = MemoryScale(path, memory.embedder.model)
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        assert other.current == UNMEASURED
        kept = memory.measure_scale()
        assert json.loads(path.read_text())["null"] == kept.null
        assert other.current == kept  # read again once the file changed
    with open_memory(tmp_path, FakeEmbedder()) as again:
        assert again.scale.current == kept  # and by the next process to open the memory
    # Another model's cosines are another scale: it reads as unmeasured until measured for it.
    assert MemoryScale(path, "fake-other").current == UNMEASURED and MemoryScale(path, "fake-other").measured is None
    path.write_text("{not json")
    assert MemoryScale(path, "fake-bow").current == UNMEASURED  # a broken file is measured again, not fatal
    # So are word counts that are not what a measurement writes: cut short, out of order, above the count.
    packed = np.array([[5, 3], [9, 1]], dtype="<u4").T.ravel()  # term ids 5 and 9, then their counts 3 and 1
    unordered = np.array([9, 5, 1, 3], dtype="<u4")
    for words, counted in (("AAAA", 10), ("not base64!", 10), (b64(unordered), 10), (b64(packed), 2)):
        path.write_text(json.dumps({**asdict(kept), "words": words, "counted": counted}))
        assert MemoryScale(path, "fake-bow").current == UNMEASURED, words
    path.write_text(json.dumps({**asdict(kept), "words": b64(packed), "counted": 10}))
    assert MemoryScale(path, "fake-bow").current.rare_share({5, 9}, {9}) > 0.5  # the rarer of the two


def test_an_ingest_measures_it_when_the_calibration_reads_it_and_only_when_due(tmp_path):
    assert CALIBRATED[READ].reads("standing")
    assert not CALIBRATED["fake-bow"].reads("standing")
    incidents = list(read_jsonl(FIXTURES / "incidents.jsonl"))
    embedder = FakeEmbedder(model=READ)
    with open_memory(tmp_path, embedder) as memory:
        report = memory.ingest(incidents[:40])
        probe_calls = [c for c in embedder.calls if len(c) == len(PROBES) + len(prototype_texts())]
        assert len(embedder.calls) == report.embedding_calls + 1 and len(probe_calls) == 1
        assert memory.scale.measured.incidents == 40
        embedder.calls.clear()
        memory.ingest(incidents[:40])  # nothing new: no call at all
        memory.ingest(incidents[:42])  # two more of forty: not due
        assert len(embedder.calls) == 1 and memory.scale.measured.incidents == 40
        memory.ingest(incidents)  # 64: due
        assert memory.scale.measured.incidents == len(incidents)
    # A memory from before (no scale kept) is measured by its next ingest, even one that brings nothing new.
    (tmp_path / "data" / "scale-incidents.json").unlink()
    older = FakeEmbedder(model=READ)
    with open_memory(tmp_path, older) as memory:
        assert memory.ingest(incidents).new == 0
        assert [len(c) for c in older.calls] == [
            len(PROBES) + len(prototype_texts())
        ] and memory.scale.measured.incidents == len(incidents)
    # A scale measured before the words were counted is measured again by the next ingest, even one that
    # brings nothing new; measured, it is not again.
    path = tmp_path / "data" / "scale-incidents.json"
    kept = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in kept.items() if k not in ("counted", "words")}))
    before = FakeEmbedder(model=READ)
    with open_memory(tmp_path, before) as memory:
        assert memory.scale.measured.counted == 0
        memory.ingest(incidents)
        memory.ingest(incidents)
        assert [len(c) for c in before.calls] == [
            len(PROBES) + len(prototype_texts())
        ] and memory.scale.measured.counted == len(incidents)
    # The fake embedder's calibration gives it no weight: nothing is spent measuring it.
    plain = FakeEmbedder()
    with open_memory(tmp_path / "plain", plain) as memory:
        report = memory.ingest(incidents)
        assert len(plain.calls) == report.embedding_calls and memory.scale.measured is None


def test_a_failed_measurement_loses_nothing_and_keeps_the_scale_it_had(tmp_path, caplog):
    incidents = list(read_jsonl(FIXTURES / "incidents.jsonl"))
    embedder = FakeEmbedder(model=READ, fail_calls=[2])  # the ingest's one call passes, the probes' fails
    with open_memory(tmp_path, embedder) as memory, caplog.at_level(logging.WARNING):
        memory._batch = 100
        report = memory.ingest(incidents)
        assert report.new == len(incidents) and memory.stats()["count"] == len(incidents)
        assert memory.scale.measured is None and memory.scale.current == UNMEASURED
        assert "the memory's scale was not measured" in caplog.text
        assert memory.similar(Alert(text="checkout pods crash looping")).neighbours  # lookups go on


def test_each_answer_carries_its_standing_on_this_memorys_scale(tmp_path):
    alert = Alert(text="checkout pods crash looping")
    with open_memory(tmp_path, FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        before = memory.similar(alert, limit=5).neighbours
        assert all(n.evidence.standing == pytest.approx(UNMEASURED.standing(n.similarity), abs=1e-4) for n in before)
        scale = memory.measure_scale()
        assert scale != UNMEASURED
        after = memory.similar(alert, limit=5).neighbours
    assert all(n.evidence.standing == pytest.approx(scale.standing(n.similarity), abs=1e-3) for n in after)
    assert after[0].evidence.standing > after[-1].evidence.standing


def test_a_memory_too_small_to_say_reads_as_unmeasured(tmp_path):
    with open_memory(tmp_path, FakeEmbedder()) as memory:
        memory.ingest(
            [make_incident(id=f"INC-{i}", title=f"checkout pods crash looping {i}") for i in range(MIN_INCIDENTS - 1)]
        )
        scale = memory.measure_scale()
    assert (scale.null, scale.neighbours) == (UNMEASURED.null, UNMEASURED.neighbours)
    assert scale.incidents == MIN_INCIDENTS - 1 and scale.due(MIN_INCIDENTS)
