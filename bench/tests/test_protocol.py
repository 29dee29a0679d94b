"""The generalisation protocol (bench.quality.generalise): its scoring reproduces the product's order, a fit finds a
weight that helps, intervals are bootstrap intervals, and the whole protocol runs on the shipped sets."""

from dataclasses import replace

import numpy as np
import pytest

from bench.quality import features as FE
from bench.quality import fit as F
from bench.quality import generalise
from bench.quality import protocol as G
from bench.quality import sets as S
from bench.quality.sets import SetQuery
from bench.quality.sets.load import family, shipped
from oncall_memory.answer.confidence import FEATURES


def query(rows, ids, strict, key="q"):
    x = np.zeros((len(rows), len(FE.COLS)))
    for i, row in enumerate(rows):
        for name, value in row.items():
            x[i, FE.C[name]] = value
    x[:, FE.C["age"]] = np.nan
    q = SetQuery(alert={"text": "x"}, strict=strict, lenient=strict, facts=strict, key=key)
    return FE.QueryFeatures(q, ids, x, {}, ["medium"] * len(ids), np.zeros((len(ids), 7)))


def test_a_fit_takes_the_weight_that_puts_the_same_service_first_and_keeps_ties_at_the_start():
    # Every alert: the right incident is a little less near by meaning but on the alert's service.
    qs = [
        query([{"sim": 0.80}, {"sim": 0.78, "service": 1}], ["OTHER", f"RIGHT{i}"], [f"RIGHT{i}"], key=str(i))
        for i in range(5)
    ]
    train = FE.SetFeatures("t", "strict", qs, "m")
    start = F.Params().with_weight("service", 0.0)
    assert F.mrr(train, "strict", start) == 0.5
    got = F.fit([train], start=start, grid={"service": (0.0, 0.05, 0.1)})
    assert got.params.weight("service") == 0.05 and got.score == 1.0  # the first value that gains
    unchanged = F.fit([train], start=start, grid={"tags": (0.0, 0.1)})  # no gain: the incumbent stays
    assert unchanged.params == start


def test_the_gate_keeps_a_far_same_service_incident_below_a_near_one():
    q = query([{"sim": 0.80, "plain": 0.2}, {"sim": 0.50, "service": 1, "plain": 0.3}], ["NEAR", "FAR"], ["NEAR"])
    p = F.Params(share="plain", lexical_share=0.5).with_weight("service", 0.2)
    assert F.order(q, p)[0] == "FAR"  # without a gate the service outweighs a far meaning
    assert F.order(q, F.Params(share="plain", lexical_share=0.5, gate=0.2).with_weight("service", 0.2))[0] == "NEAR"


def test_where_it_happened_counts_only_beside_the_alerts_symptom_when_some_candidate_tells_of_it():
    # Checkout's proxy outage, near by meaning, on the alert's service; search's crash loop tells of the
    # alert's crash loop. As the product ranks (`ranking.rank`, facts_where "symptom"): the crash loop first.
    rows = [{"sim": 0.60, "lex": 0.5, "service": 1, "env": 1}, {"sim": 0.56, "lex": 0.5, "symptom": 1}]
    q = query(rows, ["SAME_SERVICE", "SAME_SYMPTOM"], ["SAME_SYMPTOM"])
    p = G.START
    assert p.where == "symptom"
    assert F.order(q, p)[0] == "SAME_SYMPTOM"
    assert F.order(q, replace(p, where="meaning"))[0] == "SAME_SERVICE"  # the gate alone: both are near
    # With no candidate telling of a symptom, the meaning gate decides as before.
    q = query([rows[0], {**rows[1], "symptom": 0}], ["SAME_SERVICE", "OTHER"], ["SAME_SERVICE"])
    assert F.order(q, p)[0] == "SAME_SERVICE"


def test_intervals_are_bootstrap_intervals_of_the_mean():
    lo, hi = F.interval(np.array([1.0] * 20))
    assert lo == hi == 1.0
    lo, hi = F.interval(np.array([0.0, 1.0] * 50))
    assert 0.38 < lo < 0.5 < hi < 0.62


def test_the_shipped_sets_carry_families_and_the_incidents_fired_again():
    pager, written, again = shipped()
    assert family("INC-1001") == family("INC-1005") != family("INC-1006")
    first = pager.queries[0]
    assert first.strict == ["INC-1001"] and set(first.lenient) >= {"INC-1001", "INC-1002", "INC-1005"}
    assert all(not q.lenient for q in written.queries if not q.strict)  # the no-match alerts
    assert len(again.queries) == 64 and all(q.own not in q.lenient for q in again.queries)


@pytest.mark.long
def test_the_protocol_runs_on_the_shipped_sets_and_says_what_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(S, "CACHE", tmp_path / "sets")
    monkeypatch.setattr(FE, "CACHE", tmp_path / "sets")
    monkeypatch.setattr("sys.argv", ["generalise", "--embedder", "fake", "--spread", "20"])
    generalise.main()
    out = capsys.readouterr().out
    assert "3 sets, embedder fake-bow: pager, written, again" in out
    assert "runbooks: not built on this machine (python -m bench.quality.sets.runbooks)" in out
    assert "the bench's scoring gives the product's own first 10 on" in out
    for row in (
        "strict (48)",
        "lenient (64)",
        "Confidence of each set left out",
        "draws: median (5th-95th percentile)",
        '"High" among the first 5',
        "Fitted on every set",
    ):
        assert row in out


def test_a_draw_keeps_each_first_answer_with_its_labels_and_the_figures_count_as_the_style_table_does():
    from bench.quality import spread as SP
    from oncall_memory.answer.confidence import Calibration

    n = len(FEATURES)
    # Meaning alone decides: the family reads meaning x 10 - 5 through a sigmoid; low below 0.5.
    meaning = FEATURES.index("meaning")
    cal = Calibration(
        -5.0, tuple(10.0 if i == meaning else 0.0 for i in range(n)), 0.5, 0.99,
        family=(-5.0, *(10.0 if i == meaning else 0.0 for i in range(n))),
    )  # fmt: skip
    x = np.zeros((4, n))
    x[:, meaning] = [0.9, 0.2, 0.9, 0.2]  # right and sure, right and far, no-match and sure, no-match and far
    t = G.Firsts(
        x,
        right=np.array([True, True, False, False]),
        no_match=np.array([False, False, True, True]),
        before=["a", "b", "c", "d"],
        family=np.array([True, True, False, False]),
        named=np.array([False, True, False, False]),  # the far right answer names the rule's metric: never low
    )
    assert SP.figures(cal, [t]) == (0.0, 0.5, 0)
    d = SP.drawn(t, np.random.default_rng(3))
    for row, right, none, before, named in zip(d.x, d.right, d.no_match, d.before, d.named):
        i = "abcd".index(before)
        assert (row == x[i]).all() and right == t.right[i] and none == t.no_match[i] and named == t.named[i]
    only_right = replace(t, right=t.right[:2], no_match=t.no_match[:2], x=x[:2], before=t.before[:2],
                         family=t.family[:2], named=t.named[:2])  # fmt: skip
    got = SP.figures(cal, [only_right])
    assert got[0] == 0.0 and np.isnan(got[1]) and np.isnan(got[2])  # no no-match alerts: nothing to count


def firsts_of(meaning, right, no_match, named=None, columns=None):
    n = len(meaning)
    x = np.zeros((n, len(FEATURES)))
    x[:, FEATURES.index("meaning")] = meaning
    right, no_match = np.array(right), np.array(no_match)
    named = np.zeros(n, bool) if named is None else np.array(named)
    return G.Firsts(x, right, no_match, ["medium"] * n, right.copy(), named, columns)


def test_the_low_line_is_the_lowest_marking_nine_in_ten_no_match_alerts_low_pooled_over_the_sets():
    # Ten no-match alerts over two sets, at 0.1 ... 1.0: the line must pass nine of them (above 0.9); a right
    # answer's share low only grows with the line, so the lowest that does marks fewest.
    a = firsts_of([0.1, 0.2, 0.3, 0.4, 0.5, 0.95], [False] * 5 + [True], [True] * 5 + [False])
    b = firsts_of([0.6, 0.7, 0.8, 0.9, 1.0, 0.97], [False] * 5 + [True], [True] * 5 + [False])
    pool = [(t.x[:, FEATURES.index("meaning")], t) for t in (a, b)]
    assert G.low_line(pool) == 0.91
    # No line passes nine in ten: the neutral middle.
    high = firsts_of([0.99, 0.99], [False, True], [True, False])
    assert G.low_line([(np.array([0.995, 0.5]), high)]) == 0.5
