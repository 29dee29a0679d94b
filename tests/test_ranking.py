"""Ranking by facts: each weight, on its own, decides an order, and zeroing it changes that order.

Each scenario has two candidates: WINNER carries one fact the alert shares, RUNNER_UP is slightly
more relevant and carries nothing. With the default weights WINNER is first; with that one weight
zeroed, RUNNER_UP is. So no weight can be set to 0 (or its default lost) without a test failing.
"""

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from oncall_memory.answer.feedback import Tally
from oncall_memory.answer.fixes import stories, stories_by_action
from oncall_memory.answer.ranking import Candidate, rank, relevance
from oncall_memory.answer.wording import Wording, rare_tokens
from oncall_memory.domain.alert import Alert
from oncall_memory.domain.lexical import term_index, terms
from oncall_memory.settings import RankingWeights

NOW = datetime(2026, 11, 29, tzinfo=timezone.utc)
SIGNATURE = "<env> queue lag alert"


def ago(days: float) -> str:
    return (NOW - timedelta(days=days)).isoformat()


def candidates(winner: dict, runner_up: dict, weights: RankingWeights, *, sims=(0.80, 0.82), overlaps=(0.5, 0.5)):
    """WINNER with `winner`'s payload fields, RUNNER_UP with `runner_up`'s, relevance from (similarity, overlap)."""
    base = {"id": None, "opened_at": ago(30)}
    return [
        Candidate("WINNER", {**base, "id": "WINNER", **winner}, relevance(sims[0], overlaps[0], weights), sims[0]),
        Candidate(
            "RUNNER_UP", {**base, "id": "RUNNER_UP", **runner_up}, relevance(sims[1], overlaps[1], weights), sims[1]
        ),
    ]


# weight name -> (alert facts, winner's payload, runner-up's payload, extra candidate settings)
SCENARIOS = {
    "lexical_share": ({}, {}, {}, {"sims": (0.80, 0.85), "overlaps": (0.9, 0.1)}),
    "same_flavor": ({"flavor": "eks"}, {"flavor": "eks"}, {"flavor": "aks"}, {}),
    "same_env": ({"env": "shop-prod"}, {"env": "shop-prod"}, {"env": "data-prod"}, {}),
    "same_service": ({"service": "checkout"}, {"service": "checkout"}, {"service": "search"}, {}),
    # The same service's incident whose meaning is far from the best candidate's (0.24 behind, over the gate)
    # and that tells of no symptom the alert does: where it happened does not count, the nearer one wins.
    "facts_gate": (
        {"service": "checkout"},
        {"service": "search"},
        {"service": "checkout"},
        {"sims": (0.80, 0.56), "overlaps": (0.05, 1.0)},
    ),
    # The alert tells of a crash loop. The same service's incident, nearer in meaning, tells of none; another
    # service's tells of the crash loop: where it happened does not make the first a recurrence.
    "facts_where": (
        {"service": "checkout", "env": "shop-prod"},
        {"service": "search", "env": "search-prod", "symptoms": ["crash_loop"]},
        {"service": "checkout", "env": "shop-prod"},
        {"sims": (0.80, 0.85), "told": ["crash_loop"]},
    ),
    "same_symptom": ({}, {"symptoms": ["oom_kill"]}, {"symptoms": ["crash_loop"]}, {"told": ["oom_kill"]}),
    "feedback_helped": ({}, {}, {}, {"feedback": {"WINNER": Tally(helped=1)}}),
    "feedback_not_related": ({}, {}, {}, {"feedback": {"RUNNER_UP": Tally(not_related=1)}}),
    "max_feedback": ({}, {}, {}, {"feedback": {"WINNER": Tally(helped=1)}}),
    "shared_tag": ({"component_tags": ["dns"]}, {"component_tags": ["dns"]}, {"component_tags": ["disk"]}, {}),
    "max_shared_tags": ({"component_tags": ["dns"]}, {"component_tags": ["dns"]}, {"component_tags": ["disk"]}, {}),
    "worked_fix": (
        {},
        {"fixes_attempted": [{"action": "scale coredns", "outcome": "resolved"}]},
        {"fixes_attempted": [{"action": "restart pods", "outcome": "no-op"}]},
        {},
    ),
    "recency": ({}, {"opened_at": ago(10)}, {"opened_at": ago(800)}, {"sims": (0.80, 0.82)}),
    # A half-life of a year or more makes a 10-day-old and an 800-day-old incident nearly equally fresh.
    "recency_half_life_days": ({}, {"opened_at": ago(10)}, {"opened_at": ago(800)}, {"sims": (0.80, 0.82)}),
    # The alert reads "queue lag": the winner's title is that, the runner-up's is not.
    "same_title": ({}, {"title": "Queue lag"}, {"title": "queue lag on orders"}, {}),
    "rare_token": (
        {},
        {"text": "consumer stuck at offset, exit code 137"},
        {"text": "consumer stuck"},
        {"text": "queue lag, exit code 137"},
    ),
    "max_rare_tokens": (
        {},
        {"text": "consumer exit code 137"},
        {"text": "consumer"},
        {"text": "queue lag, exit code 137"},
    ),
    "signature_pin": (
        {"signature": "shop-prod queue lag alert", "env": "shop-prod"},
        {"signature_key": SIGNATURE},
        {},
        {"sims": (0.30, 0.90)},
    ),
}
# What "switched off" means for each weight: 0, False, or (for the half-life, which must stay positive) 100 years;
# for the gate, no gate at all.
OFF = {
    "signature_pin": False,
    "recency_half_life_days": 36525.0,
    "facts_gate": float("inf"),
    "facts_where": "meaning",
}
# Weights the generalisation protocol fitted to 0 (docs/evaluation.md): switched on, their fact decides.
ON: dict[str, float] = {}


def order(name: str, weights: RankingWeights) -> list[str]:
    facts, winner, runner_up, extra = SCENARIOS[name]
    extra = dict(extra)
    told = extra.pop("told", [])  # the symptoms the alert tells of
    feedback = extra.pop("feedback", {})  # responders' verdicts on alerts like this one
    text = extra.pop("text", "queue lag")  # what the alert says
    alert = Alert(text=text, **facts)
    ranked = rank(
        candidates(winner, runner_up, weights, **extra),
        facts=alert,
        weights=weights,
        signature_key=SIGNATURE if "signature" in facts else None,
        now=NOW,
        symptoms=told,
        feedback=feedback,
        wording=Wording.of(text),
    )
    return [r.candidate.key for r in ranked]


def test_every_weight_has_a_scenario():
    # `words` (and `word_rarity`, its old switch) say what the words part of relevance is before ranking (the
    # retriever's): tests/test_retrieve.py has each
    assert set(SCENARIOS) == set(RankingWeights.model_fields) - {"words", "word_rarity"}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_with_the_default_weights_the_fact_decides(name):
    assert order(name, RankingWeights(**({name: ON[name]} if name in ON else {}))) == ["WINNER", "RUNNER_UP"]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_switching_one_weight_off_lets_relevance_decide(name):
    weights = RankingWeights(**{name: OFF.get(name, 0)})
    assert order(name, weights) == ["RUNNER_UP", "WINNER"]


def test_a_zero_half_life_is_refused_with_a_reason():
    with pytest.raises(ValidationError, match="greater than 0"):
        RankingWeights(recency_half_life_days=0)


def test_recency_halves_every_half_life():
    weights = RankingWeights(recency=0.04, recency_half_life_days=100)
    fresh, old = rank(
        [
            Candidate("A", {"id": "A", "opened_at": ago(0)}, 0.5, None),
            Candidate("B", {"id": "B", "opened_at": ago(100)}, 0.5, None),
        ],
        facts=Alert(text="x"),
        weights=weights,
        signature_key=None,
        now=NOW,
    )
    assert fresh.score == pytest.approx(0.5 + 0.04) and old.score == pytest.approx(0.5 + 0.02)
    assert [b.text for b in old.boosts if b.kind == "age"] == ["3 months ago"]


def test_shared_tags_count_up_to_the_cap():
    weights = RankingWeights(shared_tag=0.03, max_shared_tags=2)
    payload = {"id": "A", "component_tags": ["dns", "networking", "coredns"]}
    (only,) = rank(
        [Candidate("A", payload, 0.5, None)],
        facts=Alert(text="x", component_tags=["dns", "networking", "coredns"]),
        weights=weights,
        signature_key=None,
        now=NOW,
    )
    assert only.score == pytest.approx(0.5 + 0.06)
    assert "3 shared components: dns, networking, coredns" in [b.text for b in only.boosts]


def test_unranked_order_is_relevance_alone_but_reasons_are_still_given():
    weights = RankingWeights()
    ranked = rank(
        candidates({"flavor": "eks"}, {}, weights),
        facts=Alert(text="x", flavor="eks"),
        weights=weights,
        signature_key=None,
        now=NOW,
        by_facts=False,
    )
    assert [r.candidate.key for r in ranked] == ["RUNNER_UP", "WINNER"]
    assert "same flavor (eks)" in [b.text for b in ranked[1].boosts]
    assert ranked[1].score == ranked[1].candidate.relevance


def test_score_is_relevance_plus_the_weights_of_the_reasons():
    weights = RankingWeights()
    (r, _) = rank(
        candidates(
            {"flavor": "eks", "env": "prod", "fixes_attempted": [{"action": "a", "outcome": "mitigated"}]}, {}, weights
        ),
        facts=Alert(text="x", flavor="eks", env="prod"),
        weights=weights,
        signature_key=None,
        now=NOW,
    )
    assert r.score == pytest.approx(r.candidate.relevance + sum(b.weight for b in r.boosts))
    kinds = [b.kind for b in r.boosts]
    assert kinds == ["meaning", "flavor", "env", "fixed", "age"]


def test_ranking_only_the_shown_fully_gives_the_same_order_scores_and_reasons():
    """`shown`: 40 candidates scored by what moves them, the 5 shown explained; the same as explaining all."""
    weights = RankingWeights()
    alert = Alert(text="queue lag, exit code 137 on 1.24.3", flavor="eks", env="prod", component_tags=["kafka"])
    pool = []
    for i in range(40):
        fixes = [{"action": "restart consumer", "outcome": ("resolved", "no-op", "worsened")[i % 3], "at": ago(i)}]
        if i % 4 == 0:  # the same action, once with another outcome: a story that changed
            fixes.append({"action": "Restart  consumer", "outcome": "resolved", "at": ago(i + 50)})
        payload = {
            "id": f"I{i}",
            "title": "Queue lag" if i % 7 == 0 else f"lag {i}",
            "text": f"consumer lag exit code {137 if i % 2 else 1} version 1.24.{i % 5}",
            "flavor": "eks" if i % 3 else "aks",
            "env": "prod" if i % 5 else "dev",
            "component_tags": ["kafka"] if i % 2 else [],
            "fixes_attempted": fixes,
            "opened_at": ago(i * 9),
        }
        pool.append(Candidate(f"I{i}", payload, relevance(0.5 + i / 100, (i % 6) / 6, weights), 0.5 + i / 100))
    common = dict(facts=alert, weights=weights, signature_key=None, now=NOW, wording=Wording.of(alert.text))
    every = rank(pool, **common)
    for k in (5, 40):
        shown = rank(pool, **common, shown=k)
        assert [(r.candidate.key, r.score, r.boosts) for r in shown] == [
            (r.candidate.key, r.score, r.boosts) for r in every[:k]
        ]
    # the facts that only explain are there, not only those that move
    assert {b.kind for r in shown for b in r.boosts} >= {"meaning", "words", "fixed", "no_effect", "changed"}


def test_equal_scores_come_back_in_the_same_order_whatever_order_the_engine_gave():
    weights = RankingWeights()
    pool = [Candidate(k, {"id": k}, 0.5, None) for k in ("b-point", "a-point", "c-point")]
    common = dict(facts=Alert(text="x"), weights=weights, signature_key=None, now=NOW, by_facts=False)
    orders = {tuple(r.candidate.key for r in rank(list(p), **common)) for p in (pool, pool[::-1], pool[1:] + pool[:1])}
    assert orders == {("a-point", "b-point", "c-point")}


def test_rarity_weighs_a_word_few_candidates_hold_above_one_all_hold():
    from oncall_memory.domain.lexical import Rarity, term_index

    common, rare, unheld = (term_index(w) for w in ("etcd", "quota-backend-bytes", "nospace"))
    query = frozenset({common, rare, unheld})
    found = [frozenset({common})] * 9 + [frozenset({common, rare})]
    rarity = Rarity(query, found)
    assert rarity.weight[rare] > rarity.weight[common] > 0
    assert rarity.weight[unheld] > rarity.weight[rare]  # held by none: counts in the whole, earns nobody anything
    assert rarity.share(found[-1]) > 2 * rarity.share(found[0])
    assert 0 < rarity.share(found[-1]) < 1 and rarity.share(query) == pytest.approx(1.0)
    assert Rarity(frozenset(), found).share(found[0]) == 0.0


def test_an_alert_whose_headline_is_the_incidents_title_is_the_same_alert_fired_again():
    # The alert's first line, under its details; a template's "[Bug]:" or a pager's "[P1]" is ceremony.
    wording = Wording.of("[Bug]: Node NotReady because of PLEG is not healthy\nkubelet: skipping pod synchronization")
    assert wording.same_title("Node NotReady because of PLEG is not healthy.")
    assert wording.same_title("[P1] node notready because of PLEG is not healthy")
    assert not wording.same_title("Node NotReady")  # a part of the headline is not the title
    assert not wording.same_title("kubelet: skipping pod synchronization")  # nor is a line of the details
    assert Wording.of("Queue lag").same_title("queue lag") and not Wording.of("").same_title("")
    # A bracket longer than a tag is text; past a few tags, the rest is text too.
    assert not Wording.of("[" + "x" * 30 + "] disk full").same_title("disk full")
    assert Wording.of("[a]" * 5 + "disk full").titles == {"[a]disk full"}


def test_reading_a_headline_costs_the_same_per_byte_at_every_size():
    # A stranger's alert of a million bracketed "tags": one pass, not a copy per tag.
    import time

    def per_byte(size: int) -> float:
        text = "[a]" * (size // 3)
        started = time.process_time()
        Wording.of(text)
        return (time.process_time() - started) / size

    small, large = per_byte(30_000), per_byte(1_200_000)
    assert large < 10 * small, [f"{t * 1e9:.0f} ns/B" for t in (small, large)]


@pytest.mark.parametrize("unit", [" ", "\n", " \n"])
def test_a_code_word_then_a_run_of_spaces_is_read_in_one_pass(unit):
    # "error" then 32,768 spaces: the spaces before and after an optional colon split the run every way
    # (minutes). Now about 0.01 s for 65,536; the bound leaves 100x room.
    import time

    started = time.process_time()
    assert rare_tokens("exit" + unit * (65_536 // len(unit)) + "y") == []
    assert time.process_time() - started < 1.0
    assert rare_tokens("exit code 137, HTTP 503, errno: 28, status:  404, error :500") == [
        "137",
        "503",
        "28",
        "404",
        "500",
    ]


# -- what ranking reads of each candidate, read the quick way: the same answer as reading it in full --------

_FRAGMENTS = st.sampled_from(
    ["exit code 137", "exit 137", "code137", "137", "1.24.3", "1.24", "v1.24.3", "1.24.3.9", "512 Mi", "512Mi",
     "512MiB", "1.5 GB", "HTTP 503", "status: 404", "503", "error_503", "errno 28", "signal 9", "disk", "full",
     "pods", "oom", " ", "\n", ".", "-", "x1"]
)  # fmt: skip
_TEXTS = st.lists(_FRAGMENTS, max_size=12).map(" ".join)


@given(alert=_TEXTS, text=_TEXTS, by_ids=st.booleans())
@settings(max_examples=400, deadline=None)
def test_the_alerts_rare_tokens_a_candidate_holds_are_those_every_pattern_finds_in_it(alert, text, by_ids):
    # `rare_in` asks the term ids first and runs the patterns only over a text holding one of the other
    # tokens' leading digits: the answer is the one every pattern run over every text gives.
    wording = Wording.of(alert)
    ids = frozenset(term_index(t) for t in terms(text)) if by_ids else None
    theirs = set(rare_tokens(text)) | (set() if by_ids else set(terms(text)))
    expected = [t for t in wording.rare if t in theirs or (ids is not None and wording.ids[t] in ids)]
    assert wording.rare_in(text, ids) == expected


_FIXES = st.lists(
    st.fixed_dictionaries(
        {
            "action": st.sampled_from(
                ["restart coredns", "Restart  CoreDNS", "roll back", "scale to 6", "raise limit"]
            ),
            "outcome": st.sampled_from(["resolved", "mitigated", "no-op", "worsened"]),
        },
        optional={"at": st.sampled_from(["2025-01-02T00:00:00+00:00", "2026-05-20T00:00:00+00:00", "2026-05-02"])},
    ),
    max_size=6,
)


@given(fixes=_FIXES)
@settings(max_examples=400, deadline=None)
def test_a_history_of_fixes_reads_as_grouping_every_fix_by_its_action_does(fixes):
    # `stories` takes a short way when each action was tried once: the same stories as the long way.
    assert stories(fixes) == stories_by_action(fixes)
