"""Score any ranking of the extracted candidates, fit its tunables, and say how sure a figure is.

A ranking is `Params`: how meaning and words make relevance (`lexical_share`, and which share of words:
plain, weighed by rarity among the candidates, or by rarity in the whole memory), and a weight per fact.
`fit` picks each by coordinate ascent over a grid, on the training sets' mean score (each set counts the
same, whatever its size), keeping the incumbent value on ties. `interval` is a bootstrap over a set's
queries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .features import COLS, DEPTH, QueryFeatures, SetFeatures

C = {name: i for i, name in enumerate(COLS)}
FACTS = ("title", "rare", "symptom", "flavor", "env", "service", "tags", "fixed")


@dataclass(frozen=True)
class Params:
    lexical_share: float = 0.3
    share: str = "rarity"  # plain | rarity | idf
    weights: tuple[tuple[str, float], ...] = (
        ("title", 0.06),
        ("rare", 0.03),
        ("symptom", 0.05),
        ("flavor", 0.06),
        ("env", 0.04),
        ("service", 0.10),
        ("tags", 0.03),
        ("fixed", 0.03),
    )
    recency: float = 0.03
    half_life: float = 180.0
    pin: bool = True
    # Where it happened (service, env, flavor, tags) counts only for candidates whose meaning is within
    # `gate` of the best candidate's: a same-service incident of another problem is not a recurrence.
    gate: float = math.inf
    gate_symptom: bool = True  # ... or that tell of a symptom the alert tells of
    # "symptom": when some candidate tells of a symptom the alert tells of, where it happened counts only
    # for those (the meaning gate only where no candidate shares one); "meaning": the gate alone, as above.
    where: str = "meaning"

    def weight(self, kind: str) -> float:
        return dict(self.weights)[kind]

    def with_weight(self, kind: str, value: float) -> Params:
        return replace(self, weights=tuple((k, value if k == kind else v) for k, v in self.weights))

    def text(self) -> str:
        ws = " ".join(f"{k} {v:g}" for k, v in self.weights)
        return f"words {self.lexical_share:g} ({self.share}); {ws}; recency {self.recency:g}; gate {self.gate:g} ({self.where})"


SHIPPED = Params()

GRID: dict[str, Sequence[object]] = {
    "lexical_share": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
    "share": ("plain", "rarity", "idf", "idf_known", "lex", "bm25"),
    "title": (0.0, 0.03, 0.06, 0.12),
    "rare": (0.0, 0.015, 0.03, 0.06),
    "symptom": (0.0, 0.025, 0.05, 0.1),
    "flavor": (0.0, 0.03, 0.06, 0.1),
    # Capped: a larger weight for where it happened lets a same-service incident of another problem outrank
    # the right one (the rule is "same service first unless the meanings are far apart").
    "env": (0.0, 0.02, 0.04, 0.08, 0.12),
    "service": (0.0, 0.025, 0.05, 0.1, 0.15, 0.2),
    "tags": (0.0, 0.015, 0.03, 0.06),
    "fixed": (0.0, 0.015, 0.03, 0.06),
    "recency": (0.0, 0.015, 0.03, 0.06),
    "gate": (math.inf, 0.3, 0.2, 0.15, 0.1, 0.05),
    "where": ("meaning", "symptom"),
}


WHERE = ("flavor", "env", "service")


def scores(x: np.ndarray, p: Params) -> np.ndarray:
    share = x[:, C[p.share]]
    sim = x[:, C["sim"]]
    s = (1 - p.lexical_share) * sim + p.lexical_share * share
    near = sim >= sim.max() - p.gate if len(sim) and math.isfinite(p.gate) else np.ones(len(sim), bool)
    told = x[:, C["symptom"]] > 0
    if p.where == "symptom" and told.any():
        near = told
    elif p.gate_symptom:
        near = near | told
    for kind, w in p.weights:
        if w:
            s = s + w * x[:, C[kind]] * (near if kind in WHERE else 1.0)
    if p.recency:
        age = x[:, C["age"]]
        s = s + np.where(np.isnan(age), 0.0, p.recency * 0.5 ** (np.nan_to_num(age) / p.half_life))
    return s


def order(q: QueryFeatures, p: Params, lift: np.ndarray | None = None) -> list[str]:
    """The candidates' ids best first under `p` (pinned first, ties by id, as the product does); `lift`, one
    per candidate, is added to their scores (a bench's variant)."""
    if not q.ids:
        return []
    s = scores(q.x, p) if lift is None else scores(q.x, p) + lift
    unpinned = q.x[:, C["pinned"]] <= 0 if p.pin else np.ones(len(q.ids), bool)
    # numpy's sort, not `sorted` with a key: the fit orders every query a few hundred thousand times. The last
    # key leads: unpinned after pinned, then by score, then by id (ties broken as the product breaks them).
    keys = np.lexsort((q.id_order, -s, unpinned))
    return [q.ids[i] for i in keys]


def reciprocal_rank(ranked: Sequence[str], relevant: Sequence[str]) -> float:
    rel = set(relevant)
    return next((1.0 / r for r, i in enumerate(ranked[:DEPTH], start=1) if i in rel), 0.0)


def baseline(name: str) -> Callable[[QueryFeatures], list[str]]:
    """An alert's order by one of the baselines read with its candidates (BM25, unranked dense or hybrid)."""
    return lambda q: q.baselines[name]


def ranked(p: Params) -> Callable[[QueryFeatures], list[str]]:
    """An alert's order under the ranking `p`."""
    return lambda q: order(q, p)


def rr_vector(fs: SetFeatures, measure: str, ranked_of: Callable[[QueryFeatures], list[str]]) -> np.ndarray:
    return np.array(
        [reciprocal_rank(ranked_of(q), getattr(q.query, measure)) for q in fs.queries if getattr(q.query, measure)]
    )


def mrr(fs: SetFeatures, measure: str, p: Params) -> float:
    v = rr_vector(fs, measure, lambda q: order(q, p))
    return float(v.mean()) if len(v) else math.nan


def primary(fs: SetFeatures) -> str:
    return fs.same_problem


def objective(sets: Sequence[SetFeatures], p: Params) -> float:
    """The training sets' mean, each set counting alike: its MRR on every measure it has (strict, lenient,
    facts; one that repeats another counted once), averaged."""
    return float(np.mean([np.mean([mrr(fs, m, p) for m in measures(fs)]) for fs in sets]))


def measures(fs: SetFeatures) -> list[str]:
    """The measures a set has answers for, a measure that gives every alert the same answers as one before
    it left out."""
    out: list[str] = []
    for m in ("strict", "lenient", "facts"):
        answers = [getattr(q.query, m) for q in fs.queries]
        if any(answers) and not any(all(a == getattr(q.query, o) for a, q in zip(answers, fs.queries)) for o in out):
            out.append(m)
    return out


def _set(p: Params, name: str, value: Any) -> Params:
    if name in ("lexical_share", "share", "recency", "gate", "where"):
        return replace(p, **{name: value})
    return p.with_weight(name, float(value))


def _get(p: Params, name: str) -> object:
    return getattr(p, name) if name in ("lexical_share", "share", "recency", "gate", "where") else p.weight(name)


@dataclass
class Fit:
    params: Params
    score: float
    trace: list[str] = field(default_factory=list)


def fit(
    sets: Sequence[SetFeatures], start: Params = SHIPPED, grid: dict[str, Sequence[object]] = GRID, passes: int = 5
) -> Fit:
    """Coordinate ascent from `start`: each tunable in turn takes the grid value that scores best on the
    sets' mean; the incumbent stays on a tie (no change without a gain)."""
    p, best = start, objective(sets, start)
    trace = []
    for _ in range(passes):
        moved = False
        for name, values in grid.items():
            for v in values:
                if v == _get(p, name):
                    continue
                candidate = _set(p, name, v)
                s = objective(sets, candidate)
                if s > best + 1e-9:
                    p, best, moved = candidate, s, True
                    trace.append(f"{name}={v} ({s:.3f})")
        if not moved:
            break
    return Fit(p, best, trace)


def interval(v: np.ndarray, n: int = 2000, seed: int = 7) -> tuple[float, float]:
    """A bootstrap 95% interval of the mean of `v` (per-query scores), resampling queries."""
    if len(v) == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(n, len(v)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))
