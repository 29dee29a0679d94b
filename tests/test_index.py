"""The embedded store's vector index: exact search below the threshold, HNSW over int8 vectors (rescored)
above it, built on a copy in another process while lookups and writes go on, swapped in whole."""

import json
import threading
from collections import Counter

import pytest
from conftest import make_incident

from oncall_memory.cli import main
from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.errors import OncallMemoryError
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.store.engines import edge
from oncall_memory.store.engines.base import RRF_K, IndexState, reciprocal_rank
from oncall_memory.store.engines.edge import _ties_by_id

SERVICES = ["checkout", "orders", "search", "payments", "auth", "gateway"]
ENVS = ["prod", "staging", "dev"]
WORDS = [
    "disk",
    "memory",
    "crash",
    "timeout",
    "dns",
    "certificate",
    "queue",
    "latency",
    "quota",
    "oom",
    "probe",
    "replica",
    "lag",
    "leader",
    "election",
    "throttle",
    "token",
    "expired",
    "pool",
    "exhausted",
]


def in_graph(memory) -> int:
    """Points the engine has put in the HNSW graph: its count adds up every named vector, and every
    incident has a sparse one (always indexed)."""
    info = memory._store.shard.info()
    return info.indexed_vectors_count - info.points_count


def incidents(n, start=0):
    """Incidents whose texts differ (word choice by index), so exact neighbours are well defined."""
    out = []
    for i in range(start, start + n):
        words = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7, 11))
        name = "".join(chr(97 + (i // 26**k) % 26) for k in range(3))  # letters: numbers are noise
        out.append(
            make_incident(
                id=f"IDX-{i:05d}",
                title=f"{words} unit{name}",
                service=SERVICES[i % 6],
                env=ENVS[i % 3],
                component_tags=["kubernetes" if i % 2 else "vm"],
            )
        )
    return out


@pytest.fixture
def memory(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", index_threshold=300, embed_batch_size=128)
    with Memory.open(settings, embedder=FakeEmbedder(dimension=256)) as mem:
        yield mem


def test_due_only_past_the_threshold_with_a_tenth_unindexed():
    assert not IndexState(299, 0).due(300) and IndexState(300, 0).due(300)
    assert not IndexState(1000, 950).due(300)  # 50 unindexed: under a tenth
    assert IndexState(1000, 900).due(300)
    assert not IndexState(10**6, 0).due(0)  # 0: never


def test_below_the_threshold_nothing_is_built_and_search_is_exact(memory):
    memory.ingest(incidents(200))
    assert not memory.index_due() and memory.build_index() is None
    assert memory._store.index_state() == IndexState(200, 0) and in_graph(memory) == 0


def test_a_build_beside_lets_lookups_and_writes_go_on_and_loses_no_write(memory):
    memory.ingest(incidents(600))
    assert memory.index_due()
    stop, lookups, failures = threading.Event(), [], []

    def look():
        while not stop.is_set():
            try:
                lookups.append(memory.similar(Alert(text="disk full on checkout"), limit=5))
            except Exception as exc:  # noqa: BLE001 - any failure during the build is the bug
                failures.append(exc)

    def write():
        memory.ingest(incidents(80, start=600))  # lands while the copy is being indexed

    looker = threading.Thread(target=look)
    looker.start()
    original_build = memory._store.build_index

    def build_while_writing(job, **kw):
        writer = threading.Thread(target=write)
        writer.start()
        original_build(job, **kw)
        writer.join()

    memory._store.build_index = build_while_writing
    report = memory.build_index()
    stop.set()
    looker.join()
    assert not failures and len(lookups) > 5
    assert report.count == 680 and report.indexed == 600 and report.replayed == 80
    assert memory._store.index_state() == IndexState(680, 600)
    assert in_graph(memory) >= 600  # written during the build: outside the graph until the next build
    assert memory.verify().healthy
    for i in (600, 640, 679):  # written during the build: found after the swap, with their payload
        found = memory.incident(f"IDX-{i:05d}")
        assert found and found["env"] == ENVS[i % 3]


def test_indexed_quantized_rescored_lookups_find_what_exact_ones_found(memory):
    memory.ingest(incidents(700))
    queries = [Alert(text=i.title) for i in incidents(60, start=300)]
    exact = [memory.similar(q, limit=10, mode="dense", rank=False) for q in queries]
    assert memory.build_index().indexed == 700
    assert in_graph(memory) == 700  # the graph is there: these lookups do not scan
    indexed = [memory.similar(q, limit=10, mode="dense", rank=False) for q in queries]
    # Compared by similarity (rescored from the original vectors), since equally near incidents may swap.
    for a, b in zip(exact, indexed):
        assert [round(n.similarity, 4) for n in b.neighbours] == [round(n.similarity, 4) for n in a.neighbours]
    assert [a.neighbours[0].id for a in exact] == [b.neighbours[0].id for b in indexed]


def test_ranked_lookups_under_the_index_score_by_the_original_vectors(memory):
    """The graph and the int8 copies pick the candidates; the similarity a ranked lookup shows and ranks by
    is the exact cosine (the int8 copies are up to 0.05 off)."""
    import math

    from oncall_memory.domain.distill import distill, distill_alert

    stored = incidents(700)
    memory.ingest(stored)
    assert memory.build_index().indexed == 700
    embedder = FakeEmbedder(dimension=256)
    by_id = {i.id: embedder.embed([distill(i)])[0] for i in stored}

    def cosine(a, b):
        return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

    checked = 0
    for alert in [Alert(text=i.title + " again") for i in incidents(20, start=350)]:
        query = embedder.embed([distill_alert(alert.text)])[0]
        for n in memory.similar(alert, limit=10).neighbours:  # ranked hybrid, the default
            assert n.similarity == pytest.approx(cosine(query, by_id[n.id]), abs=1e-5)
            checked += 1
    assert checked == 200


@pytest.mark.parametrize("indexed", [False, True])
def test_the_fusion_edge_runs_itself_picks_what_the_engines_own_fusion_picks(memory, indexed):
    """A ranked lookup's two searches run apart and are fused here (Edge's own fusion of the same two took
    twice as long). The same candidates as the engine's one-call plan, asked here beside it: any difference
    is among candidates whose fused scores tie at the cut, or that one of the two searches scored equal to
    another (fused here with equal scores in the order of their ids; the engine's order is its own)."""
    import qdrant_edge as E

    from oncall_memory.answer.retrieve import make_query

    memory.ingest(incidents(700))
    if indexed:
        assert memory.build_index().indexed == 700
    store = memory._store
    pick = edge.CANDIDATE_SEARCH if indexed else edge.EXACT_SCORES
    compared = 0
    for alert in [Alert(text=i.title + " again") for i in incidents(30, start=350)] + [Alert(text="dns quota")]:
        query = make_query(alert, memory.embedder, "hybrid")
        hits, words = store.hybrid(dense=query.dense, sparse=query.sparse, where=[], limit=20)
        dense = E.Query.Nearest(list(query.dense), using=edge.DENSE)
        sparse = E.Query.Nearest(edge._sparse(query.sparse), using=edge.SPARSE)
        bare = dict(with_payload=False, with_vector=False)
        theirs = store.shard.query(
            E.QueryRequest(
                query=E.Fusion.Rrf(k=RRF_K),
                prefetches=[E.Prefetch(limit=20, query=dense, params=pick), E.Prefetch(limit=20, query=sparse)],
                limit=20,
                **bare,
            )
        )
        by_meaning = _ties_by_id(store.shard.query(E.QueryRequest(query=dense, params=pick, limit=20, **bare)))
        by_words = _ties_by_id(store.shard.query(E.QueryRequest(query=sparse, limit=20, **bare)))
        fused = reciprocal_rank([[i for i, _ in by_meaning], [i for i, _ in by_words]], 20)
        assert {i for i, _ in fused} == {h.point_id for h in hits}
        tied = {i for ranked in (by_meaning, by_words) for i, score in ranked if _shares(score, ranked)}
        cut = theirs[-1].score
        differ = {str(p.id) for p in theirs} ^ {h.point_id for h in hits}
        assert all(abs(s.score - cut) < 1e-6 or str(s.id) in tied for s in theirs if str(s.id) in differ)
        assert len(hits) == len(theirs) == 20
        # Scored by meaning, exactly, best first; the word search's own hits and IDF scores as it gives them.
        exact = store.similarities(query.dense, [h.point_id for h in hits])
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(h.score == pytest.approx(exact[h.point_id], abs=1e-6) for h in hits)
        assert [(h.point_id, h.score) for h in words] == by_words
        compared += 1
    assert compared == 31


def _shares(score, ranked) -> bool:
    return sum(abs(other - score) < 1e-6 for _, other in ranked) > 1


def test_reciprocal_rank_fusion_scores_as_qdrant_clients_own():
    import random

    from qdrant_client.http import models
    from qdrant_client.hybrid.fusion import reciprocal_rank_fusion

    from oncall_memory.store.engines.base import reciprocal_rank

    rng = random.Random(7)
    for _ in range(50):
        ids = [f"p{i}" for i in range(40)]
        lists = [rng.sample(ids, rng.randint(0, 25)) for _ in range(2)]
        theirs = reciprocal_rank_fusion(
            [[models.ScoredPoint(id=i, version=0, score=0.0) for i in ranked] for ranked in lists],
            limit=15,
            ranking_constant_k=RRF_K,
        )
        mine = reciprocal_rank(lists, 15)
        assert [(str(p.id), pytest.approx(p.score)) for p in theirs] == mine


def test_filters_stay_right_under_the_index(memory):
    memory.ingest(incidents(900))
    before = memory.similar(
        Alert(text="dns timeout"),
        filters=Filters(env="staging", component_tags=["vm"]),
        limit=20,
        mode="dense",
        rank=False,
    )
    assert memory.build_index().indexed == 900
    after = memory.similar(
        Alert(text="dns timeout"),
        filters=Filters(env="staging", component_tags=["vm"]),
        limit=20,
        mode="dense",
        rank=False,
    )
    assert len(after.neighbours) == 20
    assert all(n.env == "staging" and "vm" in n.component_tags for n in after.neighbours)
    assert [round(n.similarity, 4) for n in after.neighbours] == [round(n.similarity, 4) for n in before.neighbours]


def test_a_failed_build_leaves_the_live_collection_and_a_later_one_works(memory, monkeypatch):
    memory.ingest(incidents(400))

    def broken(job, **kw):
        raise OncallMemoryError("child process killed")

    monkeypatch.setattr(memory._store, "build_index", broken)
    with pytest.raises(OncallMemoryError, match="killed"):
        memory.build_index()
    assert not (memory._store._root / f"{memory._store.collection}{edge.INDEX_SUFFIX}").exists()
    assert memory._store.index_state() == IndexState(400, 0) and memory.verify().healthy
    memory.ingest(incidents(10, start=400))  # writes are not held back, nor tracked, any more
    monkeypatch.undo()
    assert memory.build_index().indexed == 410


def test_a_store_made_before_the_index_existed_is_upgraded_when_opened(tmp_path, monkeypatch):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", index_threshold=300)
    plain = edge.E.EdgeConfig(
        vectors={edge.DENSE: edge.E.EdgeVectorParams(size=256, distance=edge.E.Distance.Cosine)},
        sparse_vectors={edge.SPARSE: edge.E.EdgeSparseVectorParams(modifier=edge.E.Modifier.Idf)},
    )
    with monkeypatch.context() as m:  # the config earlier versions created stores with
        m.setattr(edge, "edge_config", lambda dimension, **_: plain)
        with Memory.open(settings, embedder=FakeEmbedder(dimension=256)) as old:
            old.ingest(incidents(350))
    with Memory.open(settings, embedder=FakeEmbedder(dimension=256)) as mem:
        assert mem.similar(Alert(text="disk crash"), limit=3).neighbours
        assert mem.build_index().indexed == 350
        assert mem.verify().healthy and mem.similar(Alert(text="disk crash"), limit=3).neighbours


def test_the_cli_builds_when_due_after_an_ingest_and_on_request(tmp_path, monkeypatch, capsys):
    backlog = tmp_path / "backlog.jsonl"
    backlog.write_text("".join(json.dumps(i.model_dump(mode="json")) + "\n" for i in incidents(320)))
    monkeypatch.setenv("ONCALL_MEMORY_INDEX_THRESHOLD", "300")
    assert main(["ingest", str(backlog)]) == 0
    out, err = capsys.readouterr()
    assert "320 new" in out and "vector index: 320 of 320 incidents indexed" in err
    assert main(["index"]) == 0
    assert "not due: 320 incidents, 320 indexed" in capsys.readouterr().out
    assert main(["index", "--force"]) == 0
    assert "vector index: 320 of 320 incidents indexed" in capsys.readouterr().out
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["indexed"] == 320


def test_the_service_builds_in_the_background_when_an_ingest_makes_it_due(tmp_path):
    import time

    from oncall_memory.service.indexer import Indexer

    # Batches of 150: the store goes from 250 to 400 in one write. In smaller batches the indexer may fire
    # between two of them and (rightly) leave the rest unindexed, as they are under a tenth.
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", index_threshold=300, embed_batch_size=150)
    with Memory.open(settings, embedder=FakeEmbedder(dimension=256)) as memory:
        memory.ingest(incidents(250))
        with Indexer(memory, every=0.05):
            time.sleep(0.3)
            assert memory.index_state().indexed == 0  # under the threshold: nothing to do
            memory.ingest(incidents(150, start=250))
            deadline = time.monotonic() + 60
            while memory.index_state().indexed == 0:
                assert memory.similar(Alert(text="dns timeout"), limit=3).neighbours  # lookups go on
                assert time.monotonic() < deadline, "no index was built"
                time.sleep(0.05)
        assert memory.index_state() == IndexState(400, 400) and in_graph(memory) == 400


@pytest.mark.parametrize("quantization", ["turbo4", "turbo2", "turbo1"])
def test_a_turboquant_store_finds_what_exact_search_found_and_keeps_its_quantization(tmp_path, quantization):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", index_threshold=300, quantization=quantization)
    with Memory.open(settings, embedder=FakeEmbedder(dimension=256)) as memory:
        memory.ingest(incidents(700))
        queries = [Alert(text=i.title) for i in incidents(60, start=300)]
        exact = [memory.similar(q, limit=10, mode="dense", rank=False) for q in queries]
        assert memory.build_index().indexed == 700 and in_graph(memory) == 700
        config = json.loads((memory._store.disk_path / "edge_config.json").read_text())
        assert "turbo" in json.dumps(config["vectors"]).lower()
        indexed = [memory.similar(q, limit=10, mode="dense", rank=False) for q in queries]
        # Rescored from the originals, the quantized copy only shortlists: each answer's similarities are true
        # ones (none above what exact search found first), and nearly every one exact search found is found.
        # Compared by similarity, since many of these incidents share their words (equally near ones may swap).
        found = []
        for a, b in zip(exact, indexed):
            want, got = (Counter(round(n.similarity, 4) for n in r.neighbours) for r in (a, b))
            assert max(got) <= max(want) and a.neighbours[0].id in {n.id for n in b.neighbours}
            found.append(sum((want & got).values()) / sum(want.values()))
        assert sum(found) / len(found) >= 0.95, sum(found) / len(found)
    # opened again without the setting, and rebuilt by a reindex: the contract keeps what it was made with
    with Memory.open(Settings(data_dir=tmp_path / "data", embedder="fake"), embedder=FakeEmbedder(256)) as memory:
        assert memory.stats()["quantization"] == quantization
        memory.reindex()
        assert memory.stats()["quantization"] == quantization and memory.stats()["count"] == 700


def test_a_store_made_with_int8_records_nothing_and_an_unknown_quantization_is_refused(tmp_path):
    with Memory.open(Settings(data_dir=tmp_path / "data", embedder="fake"), embedder=FakeEmbedder(64)) as memory:
        memory.ingest(incidents(5))
        assert "quantization" not in memory.stats()
    with pytest.raises(ValueError, match="quantization"):
        Settings(quantization="binary")
