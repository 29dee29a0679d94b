"""The protocol's parts, shared by its tables (`generalise`) and its spread (`spread`): the ranking's
tunables as fit parameters, the styles, the procedures (default and variants), each alert's first answer
(`Firsts`) and the confidence models fitted on them, and how an answer's level is read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from oncall_memory.answer.confidence import (
    FEATURES,
    Calibration,
    fit_logistic,
)
from oncall_memory.settings import RankingWeights

from . import fit as F
from .features import SetFeatures
from .sets.load import STYLES

MEASURES = ("strict", "lenient", "facts")
BEFORE = F.Params(gate_symptom=False)  # the ranking before the protocol (words as rarity, 0.3 of relevance)
# The product's names for the words part of relevance, and the feature each reads.
WORDS = {"search": "lex", "share": "plain", "rarity": "rarity"}


def params_of(w: RankingWeights) -> F.Params:
    return F.Params(
        lexical_share=w.lexical_share,
        share=WORDS[w.words],
        weights=(
            ("title", w.same_title),
            ("rare", w.rare_token),
            ("symptom", w.same_symptom),
            ("flavor", w.same_flavor),
            ("env", w.same_env),
            ("service", w.same_service),
            ("tags", w.shared_tag),
            ("fixed", w.worked_fix),
        ),
        recency=w.recency,
        half_life=w.recency_half_life_days,
        gate=w.facts_gate,
        where=w.facts_where,
    )


# The procedure: the tunables the product has, from the shipped defaults. Recency is left out: no set
# carries the ages a team's history has, so none can judge it.
GRID = {k: v for k, v in F.GRID.items() if k not in ("recency", "where")} | {"share": tuple(WORDS.values())}
START = params_of(RankingWeights())


# Which style each set is of, for this run: the sets' own (`sets.load.STYLES`), unless they are all of one
# (the shipped sets alone, as the tests run it): then each set is left out on its own.
_STYLE_OF: dict[str, str] = {}


def style_of(name: str) -> str:
    return _STYLE_OF.get(name, STYLES.get(name, name))


def use_styles(sets: Sequence[SetFeatures]) -> None:
    """Leave styles out when the sets are of two or more, else each set."""
    styles = {STYLES.get(s.name, s.name) for s in sets}
    _STYLE_OF.clear()
    _STYLE_OF.update({s.name: STYLES.get(s.name, s.name) if len(styles) > 1 else s.name for s in sets})


@dataclass(frozen=True)
class Procedure:
    name: str
    start: F.Params
    grid: dict

    def loso(self, sets: Sequence[SetFeatures]) -> dict[str, F.Params]:
        """Each set's parameters, fitted on the sets of the other styles (fitted once per style)."""
        fitted = {
            style: F.fit([o for o in sets if style_of(o.name) != style], start=self.start, grid=self.grid).params
            for style in {style_of(s.name) for s in sets}
        }
        return {s.name: fitted[style_of(s.name)] for s in sets}


DEFAULT = Procedure("default", START, GRID)
VARIANTS = (
    Procedure("words as the plain share", replace(START, share="plain"), GRID | {"share": ("plain",)}),
    Procedure(
        "words weighed by rarity among the candidates", replace(START, share="rarity"), GRID | {"share": ("rarity",)}
    ),
    Procedure("words weighed by rarity in the whole memory", replace(START, share="idf"), GRID | {"share": ("idf",)}),
    Procedure("words as BM25's score", replace(START, share="bm25"), GRID | {"share": ("bm25",)}),
    Procedure(
        "no ops vocabulary boost", START.with_weight("symptom", 0.0), {k: v for k, v in GRID.items() if k != "symptom"}
    ),
    Procedure(
        "no same-title evidence", START.with_weight("title", 0.0), {k: v for k, v in GRID.items() if k != "title"}
    ),
    Procedure(
        "where it happened counts whatever the meaning",
        replace(START, gate=math.inf),
        {k: v for k, v in GRID.items() if k != "gate"},
    ),
    Procedure(
        "where it happened needs near meaning, not the shared symptom",
        replace(START, where="meaning"),
        GRID | {"where": ("meaning",)},
    ),
    Procedure("the ranking before, not fitted", BEFORE, {}),
)


@dataclass
class Firsts:
    """Each alert's first answer under a ranking: its evidence, whether it is the same problem, and whether
    nothing close is on record for the alert (no incident even of its problem family): what "low" says."""

    x: np.ndarray
    right: np.ndarray
    no_match: np.ndarray
    before: list[str]  # the level the confidence before the protocol gave it
    family: np.ndarray  # of the alert's problem family (lenient), or the same problem: what "low" denies
    named: np.ndarray | None = None  # names a metric the alert's rule watches: never "low" (`Calibration.level`)
    columns: np.ndarray | None = None  # the ranking's own reading of it (`features.COLS`), for `bench.conflict`

    def names(self) -> np.ndarray:
        return np.zeros(len(self.right), bool) if self.named is None else self.named

    def take(self, at: np.ndarray) -> Firsts:
        """These first answers at `at` (indices, or a mask), each with its own labels and evidence."""
        rows = np.arange(len(self.right))[at]
        return Firsts(
            self.x[rows],
            self.right[rows],
            self.no_match[rows],
            [self.before[i] for i in rows],
            self.family[rows],
            self.names()[rows],
            None if self.columns is None else self.columns[rows],
        )

    def family_readings(self, cal: Calibration) -> np.ndarray:
        """Each first answer's family probability as "low" reads it: certain where it names the alert's rule's
        metric or tells of the alert's canonical symptom (`Calibration.family_reading`)."""
        return np.where(self.names(), 1.0, [cal.family_reading(tuple(r)) for r in self.x])  # type: ignore[arg-type]

    def levels(self, cal: Calibration) -> np.ndarray:
        """Each first answer's level under `cal`, as the product reads it."""
        return np.array([cal.level(tuple(r), names_metric=bool(n)) for r, n in zip(self.x, self.names())])  # type: ignore[arg-type]


def before_level(e: np.ndarray) -> str:
    """The confidence as it was before the protocol: 0.7 x meaning + 0.3 x the words' share against
    all-MiniLM-L6-v2's thresholds (0.45, 0.51), a shared symptom lifting low to medium."""
    said = 0.7 * e[0] + 0.3 * e[2]
    if said < 0.45 and not e[3]:
        return "low"
    return "high" if said >= 0.51 else "medium"


def firsts(s: SetFeatures, p: F.Params) -> Firsts:
    xs, right, none, levels, family, named, columns = [], [], [], [], [], [], []
    for q in s.queries:
        if not q.ids:
            continue
        first = F.order(q, p)[0]
        i = q.ids.index(first)
        if q.x[i, F.C["pinned"]]:
            continue  # a signature match is high whatever the model says
        answers = set(getattr(q.query, s.same_problem))
        xs.append(q.evidence[i])
        right.append(first in answers)
        none.append(not q.query.lenient)  # nothing close on record: not even the same problem family
        levels.append(before_level(q.evidence[i]))
        family.append(first in answers or first in q.query.lenient)
        named.append(first in q.named)
        columns.append(q.x[i])
    x = np.array(xs).reshape(len(xs), len(FEATURES))
    cols = np.array(columns).reshape(len(columns), len(F.COLS))
    return Firsts(x, np.array(right), np.array(none), levels, np.array(family), np.array(named, dtype=bool), cols)


# What the shipped models read. The family's ("low"): the same title and where it happened (service, env)
# were left out by the rule: with them, more right first answers of the left-out sets read low (alert rules
# 14% -> 20%, pager alerts 29% -> 34%) and no more no-match alerts did. The same problem's ("high") reads
# where it happened too (issue 50, 2026-12-05): each style left out, of the top five answers 147 -> 140 wrong
# ones read high and 114 -> 120 right ones; the shipped fit reads 36 -> 9 of the pager set's other-service
# siblings high. The same title stays in `Evidence` at weight 0 for both, for a team's own verdicts to move.
CONFIDENCE = ("meaning", "standout", "words", "symptom", "above", "standing", "rare_words")
USED = [FEATURES.index(f) for f in CONFIDENCE]
SAME_PROBLEM = (*CONFIDENCE, "service", "env")
SAME_USED = [FEATURES.index(f) for f in SAME_PROBLEM]


def set_weights(train: Sequence[Firsts]) -> np.ndarray:
    """Each first answer's weight in a fit, so that every training set counts alike whatever its size (the
    weights sum to the number of answers)."""
    n = sum(len(t.right) for t in train)
    return np.concatenate([np.full(len(t.right), n / (len(train) * len(t.right))) for t in train])


def _logistic(train: Sequence[Firsts], labels: Sequence[np.ndarray], used: Sequence[int]) -> tuple[float, ...]:
    """(bias, one weight per FEATURES) of the logistic model of the features `used` on the training sets'
    first answers, each set weighed alike; the features the model does not read at 0."""
    x = np.vstack([t.x for t in train])[:, list(used)]
    y = np.concatenate(labels)
    bias, fitted = fit_logistic(x.tolist(), y.tolist(), sample_weight=set_weights(train).tolist())
    weights = [0.0] * len(FEATURES)
    for i, w in zip(used, fitted):
        weights[i] = w
    return (bias, *weights)


STEPS = [round(c, 2) for c in np.arange(0.02, 0.99, 0.01)]  # the lines a threshold is chosen among


def low_line(pool: Sequence[tuple[np.ndarray, Firsts]]) -> float:
    """The "low" line by the rule, on each training set's family probabilities beside its first answers: the
    lines marking at least 90% of the no-match alerts low (pooled over the sets), and of those the one marking
    fewest right answers low (the mean share over the sets), the lowest on a tie; 0.5 if none does."""

    def no_match_low(c: float) -> float:  # pooled: one set has five no-match alerts, another thirty
        low = sum(int((p[t.no_match] < c).sum()) for p, t in pool)
        return low / max(1, sum(int(t.no_match.sum()) for _, t in pool))

    def right_low(c: float) -> float:
        return float(np.mean([(p[t.right] < c).mean() for p, t in pool if t.right.any()]))

    ok = [c for c in STEPS if no_match_low(c) >= 0.9]
    return min(ok, key=lambda c: (right_low(c), c)) if ok else 0.5


def fit_calibration(train: Sequence[Firsts], *, decided_out: bool = False) -> Calibration:
    """Two logistic models on the training sets' first answers, each set weighed alike: the same problem, and
    of the alert's problem family. Their thresholds by the rule: `low_below` the lowest family probability
    marking at least 90% of the no-match alerts low (pooled over the sets), choosing the one that marks fewest
    right answers low (the mean share over the sets); `high_from` the lowest same-problem probability whose
    first answers, of those not read low, are right at least 90% of the time. `decided_out`: `low_below` is
    read only on the answers no rule reads as never low (the threshold cannot move the others)."""
    y = np.concatenate([t.right for t in train])
    bias, *weights = _logistic(train, [t.right for t in train], SAME_USED)
    cal = Calibration(bias, tuple(weights), 0.5, 0.9, family=_logistic(train, [t.family for t in train], USED))
    # An answer that names the alert's rule's metric is never low: as sure as certain, for the thresholds.
    probs = [t.family_readings(cal) for t in train]

    pool = [(p[~t.names()], t.take(~t.names())) if decided_out else (p, t) for p, t in zip(probs, train)]
    low = low_line(pool)
    shown = np.concatenate(probs) >= low
    same = np.concatenate([[cal.probability(tuple(r)) for r in t.x] for t in train])  # type: ignore[arg-type]

    def sure(c: float) -> bool:
        at = shown & (same >= c)
        return bool(at.sum() >= 5 and y[at].mean() >= 0.9)

    high = next((c for c in STEPS if sure(c)), 0.99)
    return replace(cal, low_below=low, high_from=high)


def style_calibrations(sets: Sequence[SetFeatures], fitted: dict[str, F.Params]) -> dict[str, Calibration]:
    """Per style, the calibration fitted on every other style's first answers."""
    out = {}
    for style in {style_of(s.name) for s in sets}:
        mine = next(s for s in sets if style_of(s.name) == style)
        out[style] = fit_calibration([firsts(o, fitted[mine.name]) for o in sets if style_of(o.name) != style])
    return out


class LevelCounts(NamedTuple):
    right: int  # right first answers
    right_low: int  # ... read low
    no_match: int  # no-match alerts
    no_match_low: int  # ... whose first answer reads low
    no_match_high: int  # ... or high


def read_levels(cal: Calibration, judged: Sequence[Firsts]) -> LevelCounts:
    """What the style table counts of first answers under `cal`, summed over `judged` (a style's sets)."""
    right = low = none = none_low = none_high = 0
    for t in judged:
        levels = t.levels(cal)
        right += int(t.right.sum())
        low += int((levels[t.right] == "low").sum())
        none += int(t.no_match.sum())
        none_low += int((levels[t.no_match] == "low").sum())
        none_high += int((levels[t.no_match] == "high").sum())
    return LevelCounts(right, low, none, none_low, none_high)
