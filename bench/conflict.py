"""Can one "low" line meet every style's goals: post-mortems' right answers beside the no-match alerts? (issue 50)

    python -m bench.conflict

Issue 50's goals pull on one line: at least 90% of each style's no-match alerts read low, and at most 20% of
its right first answers do. The pager style's no-match alerts are near misses (the same component, another
failure); post-mortems' right answers are the same kind of failure at another company, in other words. This
prints how far apart the styles are, from the most generous side first:

  1. in-sample: the family's model as it ships, fitted on every set at once (the left-out sets included,
     so no threshold could do better), and each style's two shares at a range of lines;
  2. in-sample again, over everything the lookup reads of a first answer: confidence's evidence and every
     column the ranking reads (`features.COLS`), standardised, at two strengths of L2: the line that marks
     90% of the pager style's no-match alerts low, what it does to every style, and the heaviest weights;
  3. that model each style left out, its line chosen by the protocol's rule (`generalise.low_line`).

If (1) has no line meeting both goals, no threshold on the shipped evidence can. If (2) has one and (3)
loses it, what separates them in-sample tells the styles apart, not the same problem from another one.
Reads the feature cache `bench.generalise` writes (run it first).
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from oncall_memory import Settings
from oncall_memory.answer.confidence import FEATURES, fit_logistic

from . import fit as F
from . import generalise as G
from .features import COLS, SetFeatures, extract
from .sets.load import every_set

PAGER, POSTMORTEMS = "pager alerts vs incidents", "post-mortems"
NAMES = (*FEATURES, *(f"ranking's {c}" for c in COLS))
_SYMPTOM = FEATURES.index("symptom")

Probabilities = Callable[[G.Firsts], np.ndarray]


def decided(t: G.Firsts) -> np.ndarray:
    """The first answers a rule reads as never low whatever a model says: a canonical symptom both tell of, or
    the alert's rule's metric named."""
    return t.names() | (t.x[:, _SYMPTOM] > 0)


def shares(probs: Probabilities, by_style: Mapping[str, Sequence[G.Firsts]], line: float) -> dict[str, tuple]:
    """Per style, under `line`: (right first answers read low, no-match alerts read low), each a share over
    the style's sets pooled, None where it has none."""
    out = {}
    for style, judged in by_style.items():
        p = [(probs(t), t) for t in judged]
        right = sum(int(t.right.sum()) for _, t in p)
        none = sum(int(t.no_match.sum()) for _, t in p)
        right_low = sum(int((q[t.right] < line).sum()) for q, t in p)
        none_low = sum(int((q[t.no_match] < line).sum()) for q, t in p)
        out[style] = (right_low / right if right else None, none_low / none if none else None)
    return out


def meets(row: Mapping[str, tuple]) -> bool:
    """Every style's two goals: at most 20% of right first answers low, at least 90% of no-match alerts."""
    return all((r is None or r <= 0.2) and (n is None or n >= 0.9) for r, n in row.values())


def lines_meeting(probs: Probabilities, by_style: Mapping[str, Sequence[G.Firsts]]) -> str:
    ok = [c for c in G.STEPS if meets(shares(probs, by_style, c))]
    return f"{ok[0]:.2f}-{ok[-1]:.2f} ({len(ok)} of {len(G.STEPS)} lines)" if ok else "none"


def line_marking(probs: Probabilities, judged: Sequence[G.Firsts], share: float = 0.9) -> float:
    """The lowest line that marks at least `share` of these sets' no-match alerts low (pooled)."""
    p = np.sort(np.concatenate([probs(t)[t.no_match] for t in judged]))
    if not len(p):
        return 0.0
    return float(p[min(len(p), int(np.ceil(share * len(p)))) - 1]) + 1e-9


class EverythingModel:
    """The family's logistic model over everything the lookup reads of a first answer, standardised on the
    training sets (each weighed alike, as the protocol weighs them); a decided answer reads 1."""

    def __init__(self, train: Sequence[G.Firsts], l2: float) -> None:
        x = np.vstack([self.rows(t) for t in train])
        self.keep = x.std(0) > 0  # a column constant here (a fact no training memory records) says nothing
        self.mean, self.scale = x[:, self.keep].mean(0), x[:, self.keep].std(0)
        y = np.concatenate([t.family for t in train])
        sw = G.set_weights(train).tolist()
        self.bias, weights = fit_logistic(self.scaled(x).tolist(), y.tolist(), sample_weight=sw, l2=l2)
        self.weights = np.array(weights)

    @staticmethod
    def rows(t: G.Firsts) -> np.ndarray:
        assert t.columns is not None  # `generalise.firsts` fills them
        return np.hstack([t.x, t.columns])

    def scaled(self, x: np.ndarray) -> np.ndarray:
        return (x[:, self.keep] - self.mean) / self.scale

    def __call__(self, t: G.Firsts) -> np.ndarray:
        z = self.bias + self.scaled(self.rows(t)) @ self.weights
        return np.where(decided(t), 1.0, 1 / (1 + np.exp(-np.clip(z, -500, 500))))

    def heaviest(self, n: int = 6) -> list[tuple[str, float]]:
        named = zip(np.array(NAMES)[self.keep], self.weights)
        return sorted(((k, float(w)) for k, w in named), key=lambda kw: -abs(kw[1]))[:n]


def cell(pair: tuple) -> str:
    return " / ".join("-" if v is None else f"{v:.0%}" for v in pair)


def print_lines(probs: Probabilities, by_style: Mapping[str, Sequence[G.Firsts]], lines: Sequence[float]) -> None:
    styles = sorted(by_style)
    print(f"  {'line':>6}  " + "".join(f"{s[:24]:>26}" for s in styles))
    for line in lines:
        row = shares(probs, by_style, line)
        print(f"  {line:>6.2f}  " + "".join(f"{cell(row[s]):>26}" for s in styles))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default="local", choices=("local", "fake"))
    args = ap.parse_args()
    sets, missing = every_set()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="conflict-")), embedder=args.embedder)
    features: list[SetFeatures] = [extract(s, settings) for s in sets]
    G.use_styles(features)
    styles = {G.style_of(s.name) for s in features}
    if not {PAGER, POSTMORTEMS} <= styles:
        print("needs the pager style and post-mortems: " + "; ".join(missing or ["python -m bench.sets.postmortems"]))
        return
    every = F.fit(features, start=G.START, grid=G.GRID).params
    firsts = {s.name: G.firsts(s, every) for s in features}
    by_style = {st: [firsts[s.name] for s in features if G.style_of(s.name) == st] for st in styles}
    print("Each cell: right first answers read low / no-match alerts read low (goals: at most 20% / at least 90%)")

    shipped = G.fit_calibration(list(firsts.values()))
    assert shipped.family is not None

    def as_shipped(t: G.Firsts) -> np.ndarray:
        return t.family_readings(shipped)

    print("\n1. In-sample, the family's model as it ships (fitted on every set), at each line:")
    at_pager = line_marking(as_shipped, by_style[PAGER])
    lines = sorted({*np.round(np.arange(0.30, 0.75, 0.04), 2), round(at_pager, 2), shipped.low_below})
    print_lines(as_shipped, by_style, lines)
    print(
        f"  the rule's line {shipped.low_below:.2f}; the lowest marking 90% of the pager style's no-match low {at_pager:.2f}"
    )
    print(f"  lines meeting every style's two goals: {lines_meeting(as_shipped, by_style)}")

    print("\n2. In-sample, over everything the lookup reads of a first answer, at the line marking 90% of the")
    print("   pager style's no-match alerts low:")
    for l2 in (10.0, 1.0):
        model = EverythingModel(list(firsts.values()), l2)
        line = line_marking(model, by_style[PAGER])
        row = shares(model, by_style, line)
        print(f"  L2 {l2:g}, line {line:.2f}: " + "; ".join(f"{s} {cell(row[s])}" for s in sorted(row)))
        print("    heaviest weights: " + ", ".join(f"{k} {w:+.2f}" for k, w in model.heaviest()))
        print(f"    lines meeting every style's two goals: {lines_meeting(model, by_style)}")

    print("\n3. That model, each style left out (its line by the protocol's rule, on the other styles):")
    loso = G.DEFAULT.loso(features)  # as the protocol fits: the ranking too with the style left out
    for style in sorted(styles):
        fitted = loso[next(s.name for s in features if G.style_of(s.name) == style)]
        train = [G.firsts(s, fitted) for s in features if G.style_of(s.name) != style]
        judged = [G.firsts(s, fitted) for s in features if G.style_of(s.name) == style]
        for l2 in (10.0, 1.0):
            model = EverythingModel(train, l2)
            line = G.low_line([(model(t), t) for t in train])
            print(f"  L2 {l2:g}, {style[:30]:30} line {line:.2f}: {cell(shares(model, {style: judged}, line)[style])}")


if __name__ == "__main__":
    main()
