"""Filter then rank: hard filters inside the query, soft preferences by facts, reasons for each."""

from datetime import datetime, timezone

import pytest
from conftest import make_incident
from pydantic import ValidationError

from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.domain.conditions import holds
from oncall_memory.domain.signature import canonical_signature
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.errors import InvalidInput
from oncall_memory.evaluation import Configuration, evaluate, metrics, read_labels
from oncall_memory.memory import Memory
from oncall_memory.settings import RankingWeights, Settings

NOW = datetime(2026, 11, 29, tzinfo=timezone.utc)
STORY = "coredns lookups time out under load, cluster dns i/o timeout"


def memory_over(store, incidents, embedder=None, **weights):
    """A memory over the `store` fixture (which closes it), holding `incidents`."""
    memory = Memory(store, embedder or FakeEmbedder(), Settings(data_dir=":memory:", weights=RankingWeights(**weights)))
    memory.ingest(incidents)
    return memory


def test_an_env_filter_never_returns_another_env(store):
    incidents = [make_incident(id=f"I{i}", title=STORY, env=env) for i, env in enumerate(["prod", "staging"] * 5)]
    r = memory_over(store, incidents)
    for mode in ("hybrid", "dense", "lexical"):
        lookup = r.similar(Alert(text=STORY), filters=Filters(env="staging"), limit=10, mode=mode)
        assert len(lookup.neighbours) == 5
        assert {n.env for n in lookup.neighbours} == {"staging"}


def test_tag_and_time_filters_apply_inside_the_query(store):
    incidents = [
        make_incident(id="OLD", title=STORY, component_tags=["dns"], opened_at="2024-01-01T00:00:00Z"),
        make_incident(id="NEW", title=STORY, component_tags=["dns", "coredns"], opened_at="2026-10-01T00:00:00Z"),
        make_incident(id="UNTAGGED", title=STORY, opened_at="2026-10-02T00:00:00Z"),
    ]
    r = memory_over(store, incidents)
    ids = [n.id for n in r.similar(Alert(text=STORY), filters=Filters(component_tags=["dns"]), limit=5).neighbours]
    assert sorted(ids) == ["NEW", "OLD"]
    ids = [n.id for n in r.similar(Alert(text=STORY), filters=Filters(since="2026-01-01"), limit=5).neighbours]
    assert sorted(ids) == ["NEW", "UNTAGGED"]


def test_same_story_two_flavors_the_same_flavor_comes_first(store):
    incidents = [
        make_incident(id="AKS", title=STORY, flavor="aks", opened_at="2026-06-01T00:00:00Z"),
        make_incident(id="EKS", title=STORY, flavor="eks", opened_at="2026-06-01T00:00:00Z"),
    ]
    r = memory_over(store, incidents, same_flavor=0.06)  # fitted to 0 by the protocol: a team may switch it on
    for flavor, first in (("eks", "EKS"), ("aks", "AKS")):
        lookup = r.similar(Alert(text=STORY, flavor=flavor), now=NOW)
        assert lookup.neighbours[0].id == first
        assert f"same flavor ({flavor})" in lookup.neighbours[0].reasons
        assert not any(reason.startswith("same flavor") for reason in lookup.neighbours[1].reasons)


def test_a_worked_fix_is_surfaced_and_a_noop_is_flagged(store):
    incident = make_incident(
        id="DNS",
        title=STORY,
        component_tags=["dns", "networking", "coredns"],
        opened_at="2026-07-29T00:00:00Z",
        fixes_attempted=[
            {"action": "restart app pods", "outcome": "no-op"},
            {"action": "enable nodelocal dnscache", "outcome": "resolved"},
            {"action": "delete coredns pods", "outcome": "worsened"},
        ],
    )
    r = memory_over(store, [incident])
    (n,) = r.similar(Alert(text=STORY, component_tags=["dns", "networking"]), now=NOW).neighbours
    assert n.fixes_worked == ["enable nodelocal dnscache"]
    assert n.fixes_failed == ["restart app pods", "delete coredns pods"]
    assert "fixed by: enable nodelocal dnscache" in n.reasons
    assert "tried before without effect: restart app pods" in n.reasons
    assert "made it worse last time: delete coredns pods" in n.reasons
    assert "2 shared components: dns, networking" in n.reasons
    assert "4 months ago" in n.reasons and n.age == "4 months ago"


# A long story, so that one extra word lowers similarity by less than one fact's weight: the incident
# told in the alert's exact words is a little more relevant, and only the fact can put the other first.
LONG = (
    "coredns lookups time out under load cluster dns i/o timeout upstream resolver slow kube-dns "
    "service endpoints flapping ndots search domains conntrack table full udp packets dropped "
    "nodelocal cache missing autoscaler replicas too few resolv conf"
)


@pytest.mark.parametrize("weight,expected", [({}, ["FIXED", "NOFIX"]), ({"worked_fix": 0}, ["NOFIX", "FIXED"])])
def test_a_fix_that_worked_outranks_a_slightly_nearer_incident_without_one(store, weight, expected):
    incidents = [
        make_incident(id="NOFIX", title=LONG),
        make_incident(
            id="FIXED", title=LONG + " again", fixes_attempted=[{"action": "scale coredns", "outcome": "resolved"}]
        ),
    ]
    r = memory_over(store, incidents, **weight)
    # (The alert is not word for word either title: that would be evidence of its own, "the same title".)
    assert [n.id for n in r.similar(Alert(text=LONG + " today"), now=NOW).neighbours] == expected


@pytest.mark.parametrize("weight,expected", [({}, ["RECENT", "OLD"]), ({"recency": 0}, ["OLD", "RECENT"])])
def test_a_recent_incident_outranks_a_slightly_nearer_old_one(store, weight, expected):
    incidents = [
        make_incident(id="OLD", title=LONG, opened_at="2023-11-01T00:00:00Z"),
        make_incident(id="RECENT", title=LONG + " again", opened_at="2026-11-01T00:00:00Z"),
    ]
    r = memory_over(store, incidents, **weight)
    lookup = r.similar(Alert(text=LONG + " today"), now=NOW)
    assert [n.id for n in lookup.neighbours] == expected
    assert "4 weeks ago" in lookup.neighbours[expected.index("RECENT")].reasons


def test_an_exact_signature_match_is_pinned_first_even_when_worded_far_away(store):
    signature = "<env> ipsec pod not ready alert - <env>: tunnel down"
    incidents = [make_incident(id=f"NEAR{i}", title=f"{STORY} {i}") for i in range(5)]
    incidents.append(
        make_incident(id="SIG", title="completely different words", signature=signature, env="payments-prod")
    )
    r = memory_over(store, incidents)
    alert = Alert(text=STORY, signature="shop-prod ipsec pod not ready alert - shop-prod: tunnel down", env="shop-prod")
    lookup = r.similar(alert, limit=3)
    assert lookup.neighbours[0].id == "SIG"
    assert lookup.neighbours[0].reasons[0] == "exact signature match"
    assert [n.id for n in r.similar(alert, limit=3, rank=False).neighbours][0] != "SIG"


def test_canonical_signature_normalises_envs_numbers_and_hashes():
    a = canonical_signature("shop-prod: pod api-7d9f8b6c4-x2kq9 restarted 14 times", ["shop-prod"])
    b = canonical_signature("data-prod: pod api-5c8d7f9b6-qw7rt restarted 3 times", ["data-prod"])
    assert a == b == "<env>: pod api restarted <n> times"


class DownEmbedder(FakeEmbedder):
    """Embeds fine at ingest, then the API goes away."""

    down = False

    def embed(self, texts):
        if self.down:
            from oncall_memory.errors import EmbeddingFailed

            raise EmbeddingFailed("connection refused")
        return super().embed(texts)


def test_lookups_degrade_to_words_only_when_the_embedder_is_down(store):
    embedder = DownEmbedder()
    r = memory_over(
        store, [make_incident(id="DNS", title=STORY), make_incident(id="DISK", title="disk full")], embedder
    )
    embedder.down = True
    lookup = r.similar(Alert(text="dns i/o timeout"))
    assert lookup.mode == "lexical"
    assert "embedder unreachable" in lookup.degraded and "word matches only" in lookup.degraded
    assert [n.id for n in lookup.neighbours] == ["DNS"]
    assert lookup.neighbours[0].similarity is None


@pytest.mark.parametrize("limit", [0, 101])
def test_limit_outside_1_to_100_is_rejected(store, limit):
    r = memory_over(store, [make_incident()])
    with pytest.raises(InvalidInput, match="between 1 and 100"):
        r.similar(Alert(text="x"), limit=limit)


def test_bad_alerts_and_filters_are_rejected():
    with pytest.raises(ValidationError, match="alert text is empty"):
        Alert(text="   ")
    with pytest.raises(ValidationError, match="region"):
        Filters.model_validate({"region": "eu"})


def test_scores_match_a_hand_computation():
    ranked = [["A", "B", "C", "D", "E"], ["X", "Y", "Z", "Q", "R"], ["M", "N"]]
    relevant = [["A"], ["Z", "R"], ["none"]]
    s = metrics(ranked, relevant)
    # recall@3: 1, 1/2, 0 -> 0.5;  recall@5: 1, 1, 0 -> 2/3;  hit@1: 1, 0, 0;  RR: 1, 1/3, 0
    assert s.recall_at_3 == pytest.approx(0.5)
    assert s.recall_at_5 == pytest.approx(2 / 3)
    assert s.hit_at_1 == pytest.approx(1 / 3)
    assert s.mrr == pytest.approx((1 + 1 / 3) / 3)


def test_eval_runs_labelled_queries_through_the_real_retriever(store, tmp_path):
    r = memory_over(
        store,
        [
            make_incident(id="DNS", title="coredns lookup timeout"),
            make_incident(id="DISK", title="node disk pressure evictions"),
            make_incident(id="CERT", title="tls certificate expired"),
        ],
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"text": "coredns lookup timeout", "relevant": ["DNS"]}\n'
        '{"text": "disk pressure", "relevant": ["DISK", "CERT"]}\n'
    )
    queries = read_labels(labels)
    results = evaluate(r, queries, configurations=[Configuration("lexical", "lexical", False)])
    # Words only: query 1 finds DNS first; query 2 finds DISK only (CERT shares no word).
    s = results["lexical"]
    assert (s.hit_at_1, s.mrr, s.recall_at_3) == (1.0, 1.0, pytest.approx(0.75))


def test_eval_holds_the_configurations_against_bm25_over_the_same_stored_texts(store, tmp_path):
    r = memory_over(
        store,
        [
            make_incident(id="DNS", title="coredns lookup timeout", env="prod"),
            make_incident(id="DNS-STAGING", title="coredns lookup timeout during the staging rollout", env="staging"),
            make_incident(id="DISK", title="node disk pressure evictions", env="prod"),
        ],
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"text": "coredns lookup timeout", "relevant": ["DNS"]}\n'
        '{"text": "coredns lookup timeout", "filters": {"env": "staging"}, "relevant": ["DNS-STAGING"]}\n'
        '{"text": "certificate expired", "relevant": ["DISK"]}\n'
    )
    results = evaluate(r, read_labels(labels), configurations=[Configuration("lexical", "lexical", False)])
    assert list(results) == ["BM25", "lexical"]
    # 1: both DNS texts hold every word; the shorter one scores higher (BM25's length normalisation).
    # 2: the hard filter leaves only the staging one.  3: no word in common, nothing found.
    s = results["BM25"]
    assert (s.hit_at_1, s.mrr) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert "BM25" not in evaluate(r, read_labels(labels), configurations=[], baseline=False)


def test_a_bad_label_line_names_its_line(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"text": "x", "relevant": ["A"]}\n{"text": "y", "relevant": ["A"], "region": "eu"}\n')
    with pytest.raises(InvalidInput, match=r"labels.jsonl:2: region is not a known field"):
        read_labels(labels)


def test_a_pinned_signature_match_still_obeys_the_hard_filters(store):
    signature = "<env> disk pressure alert - <env>: evicting pods"
    r = memory_over(
        store,
        [
            make_incident(id="PROD", title="evictions", signature=signature, env="prod"),
            make_incident(id="STAGING", title="evictions again", signature=signature, env="staging"),
            make_incident(id="OTHER", title=STORY, env="staging"),
        ],
    )
    alert = Alert(text=STORY, signature="dev disk pressure alert - dev: evicting pods", env="dev")
    ids = [n.id for n in r.similar(alert, filters=Filters(env="staging"), limit=5).neighbours]
    assert ids[0] == "STAGING" and "PROD" not in ids


def test_a_signature_learnt_after_the_first_lookup_is_found(store):
    embedder = FakeEmbedder()
    r = memory_over(store, [make_incident(id="A", title=STORY)], embedder)
    alert = Alert(text="zzz", signature="<env> queue lag alert")
    assert not any(n.signature_match for n in r.similar(alert).neighbours)
    r.ingest([make_incident(id="B", title="kafka", signature="<env> queue lag alert")])
    assert r.similar(alert).neighbours[0].id == "B"


@pytest.mark.parametrize(
    "filters",
    [
        Filters(env="prod"),
        Filters(component_tags=["dns"]),
        Filters(since="2026-01-01"),
        Filters(until="2026-01-01"),
        Filters(env="prod", flavor="eks", component_tags=["dns", "networking"]),
    ],
)
def test_the_python_filter_check_agrees_with_qdrant(store, filters):
    incidents = [
        make_incident(id=f"I{i}", title=STORY, env=env, flavor=flavor, component_tags=tags, opened_at=opened)
        for i, (env, flavor, tags, opened) in enumerate(
            [
                ("prod", "eks", ["dns", "networking"], "2025-06-01T00:00:00Z"),
                ("prod", "aks", ["dns"], "2026-06-01T00:00:00Z"),
                ("staging", "eks", ["networking"], "2026-02-01T00:00:00Z"),
                ("prod", "eks", [], None),
            ]
        )
    ]
    r = memory_over(store, incidents)
    by_qdrant = {n.id for n in r.similar(Alert(text=STORY), filters=filters, limit=10, rank=False).neighbours}
    by_python = {p["id"] for _, p, _ in store.points() if holds(filters.conditions(), p)}
    assert by_qdrant == by_python


def test_an_identical_title_and_a_rare_token_count_and_are_named(store):
    incidents = [
        make_incident(id="SIZE", title="search pods restart, heap limit 512Mi too small for the new mapping"),
        make_incident(id="TITLE", title="Search pods restart after the mapping change"),
        make_incident(id="OTHER", title="search pods restart after node drain"),
    ]
    r = memory_over(store, incidents)
    by_size = r.similar(Alert(text="search pods restart with limit 512Mi"), now=NOW).neighbours
    assert by_size[0].id == "SIZE" and "both mention 512mi" in by_size[0].reasons
    by_title = r.similar(Alert(text="search pods restart after the mapping change."), now=NOW).neighbours
    assert by_title[0].id == "TITLE" and "the same title" in by_title[0].reasons
    assert any(reason.startswith("words in common: ") for reason in by_title[0].reasons)


class OneMeaning(FakeEmbedder):
    """Every incident means the same, and the alert (it says "although") is as far from each: the order is
    left to the words, and the meaning is weak enough that they decide the confidence too."""

    def _vector(self, text):
        cosine = 0.35 if "although" in text else 1.0
        return [cosine, (1 - cosine**2) ** 0.5] + [0.0] * (self.dimension - 2)


ETCD_FULL = "etcd alarm NOSPACE: mvcc database space exceeded"


def etcd_lookalikes():
    """Five reports that all say the alarm's common words, and one that shares the alert's rare flag only."""
    same_words = [make_incident(id=f"LOOK{i}", title=f"{ETCD_FULL} on member {i}") for i in range(5)]
    return [*same_words, make_incident(id="FLAG", title="etcd ignores --quota-backend-bytes=10g")]


def test_a_rare_shared_word_outweighs_words_every_lookalike_holds(store):
    r = memory_over(store, etcd_lookalikes(), OneMeaning())
    alert = Alert(text=f"{ETCD_FULL} although we set --quota-backend-bytes=10g")
    lookup = r.similar(alert, limit=6, now=NOW)
    assert lookup.neighbours[0].id == "FLAG", [n.id for n in lookup.neighbours]
    words = next(reason for reason in lookup.neighbours[0].reasons if reason.startswith("words in common"))
    assert words.removeprefix("words in common: ").split(", ")[0] == "quota-backend-bytes"  # the rarest first


def test_with_word_rarity_off_every_shared_word_counts_the_same(store):
    r = memory_over(store, etcd_lookalikes(), OneMeaning(), word_rarity=False)
    alert = Alert(text=f"{ETCD_FULL} although we set --quota-backend-bytes=10g")
    assert r.similar(alert, limit=6, now=NOW).neighbours[0].id.startswith("LOOK")


def test_confidence_reads_the_plain_word_share_not_the_rarity_the_other_candidates_lend(tmp_path):
    """Rarity depends on what else came back; how sure an answer is must not."""
    alert = Alert(text=f"{ETCD_FULL} although we set --quota-backend-bytes=10g")
    levels = {}
    for rarity in (True, False):
        with Memory.open(
            Settings(data_dir=tmp_path / str(rarity), weights=RankingWeights(word_rarity=rarity)), embedder=OneMeaning()
        ) as r:
            r.ingest(etcd_lookalikes())
            levels[rarity] = {n.id: n.confidence for n in r.similar(alert, limit=6, now=NOW).neighbours}
    assert levels[True] == levels[False]


def test_an_unranked_lookup_shows_each_incident_whole_in_every_mode(store):
    # An unranked lookup reads its hits whole in one search (it shows every one it reads): what is not a
    # ranking field (the root cause, the link) is still in the answer, as a ranked lookup shows it.
    incidents = [
        make_incident(id=f"I{i}", title=STORY, root_cause=f"cause {i}", url=f"https://pager.example/I{i}")
        for i in range(3)
    ]
    r = memory_over(store, incidents)
    for mode in ("hybrid", "dense", "lexical"):
        for rank in (False, True):
            shown = r.similar(Alert(text=STORY), limit=3, mode=mode, rank=rank).neighbours
            assert sorted((n.id, n.root_cause, n.url) for n in shown) == [
                (f"I{i}", f"cause {i}", f"https://pager.example/I{i}") for i in range(3)
            ], (mode, rank)
