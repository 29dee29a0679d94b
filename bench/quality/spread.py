"""How far the style table's confidence figures move when its answers are drawn again (issue 50).

    python -m bench.quality.spread [--draws 200] [--seed 7]

`bench.quality.generalise` prints, per style left out, how many right first answers read low and how many no-match
alerts read low or high: one count each, from one fit on one draw of answers. The goals sit close to the
counts (37% against 20%, 85% against 90%), and a model fitted on some 600 first answers can move with a few
dozen of them. So, per style, the same figures over bootstrap draws, two ways:

  - the fit: each training set's first answers drawn again with replacement, the calibration refitted, the
    left-out style's own answers as they are: how much the figure is the fit's luck;
  - the fit and the judging: the left-out style's answers drawn again too: how much it is also the few
    answers it is judged on (35 right first answers for post-mortems, 4 no-match alerts for message rules).

It prints the median and the 5th-95th percentiles of each figure, and the share of draws that meet each
goal. The ranking is fitted once, with the style left out, as `bench.quality.generalise` fits it: only the
calibration is drawn again. Reads the feature cache `bench.quality.generalise` writes (run it first);
`bench.quality.generalise` prints this table too, after its style table.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from oncall_memory import Settings

from . import fit as F
from . import protocol as G
from .features import SetFeatures, extract
from .sets.load import every_set


def drawn(t: G.Firsts, rng: np.random.Generator) -> G.Firsts:
    """The same first answers drawn again with replacement (as many as there are)."""
    return t.take(rng.integers(0, len(t.right), len(t.right)))


def figures(cal: G.Calibration, judged: Sequence[G.Firsts]) -> tuple[float, float, float]:
    """(right first answers read low, no-match alerts read low: shares; no-match alerts read high: a count),
    summed over the left-out style's sets; NaN where the style has none of them."""
    right, low, none, none_low, none_high = G.read_levels(cal, judged)
    if not none:
        return low / right if right else np.nan, np.nan, np.nan
    return low / right if right else np.nan, none_low / none, none_high


def spread_line(label: str, rows: np.ndarray) -> str:
    def cell(v: np.ndarray, pct: bool) -> str:
        v = v[~np.isnan(v)]
        if not len(v):
            return f"{'-':>20}"
        lo, mid, hi = np.percentile(v, [5, 50, 95])
        if pct:
            return f"{mid:>6.0%} ({lo:.0%}-{hi:.0%})".rjust(20)
        return f"{mid:>4.0f} ({lo:.0f}-{hi:.0f})".rjust(20)

    def meeting(v: np.ndarray, goal: Callable[[np.ndarray], np.ndarray]) -> float:
        v = v[~np.isnan(v)]
        return float(np.mean(goal(v))) if len(v) else np.nan

    right_low, none_low, none_high = rows.T
    met = [
        meeting(right_low, lambda v: v <= 0.2),
        meeting(none_low, lambda v: v >= 0.9),
        meeting(none_high, lambda v: v == 0),
    ]
    goals = " ".join("    -" if np.isnan(m) else f"{m:>5.0%}" for m in met)
    return f"    {label:22}{cell(right_low, True)}{cell(none_low, True)}{cell(none_high, False)}   {goals}"


def spread_table(features: Sequence[SetFeatures], fitted: dict[str, F.Params], draws: int, seed: int = 7) -> None:
    """Per style left out: its confidence figures as fitted, over `draws` refits on the training answers drawn
    again, and over those with its own answers drawn again too."""
    rng = np.random.default_rng(seed)
    print(f"\nEach style left out, over {draws} draws: median (5th-95th percentile); last, the share of draws")
    print("meeting each goal (right low <= 20%, no-match low >= 90%, no-match high 0)")
    print(f"  {'style':26}{'right low':>20}{'no-match low':>20}{'no-match high':>20}   goals met")
    calibrations = G.style_calibrations(features, fitted)
    for style in sorted(calibrations):
        mine = [s for s in features if G.style_of(s.name) == style]
        at = fitted[mine[0].name]  # every set of a style is fitted the same, with the style left out
        train = [G.firsts(o, at) for o in features if G.style_of(o.name) != style]
        judged = [G.firsts(s, fitted[s.name]) for s in mine]
        once = figures(calibrations[style], judged)
        fit_only, both = [], []
        for _ in range(draws):
            cal = G.fit_calibration([drawn(t, rng) for t in train])
            fit_only.append(figures(cal, judged))
            both.append(figures(cal, [drawn(t, rng) for t in judged]))
        print(f"  {style}")
        print(spread_line("as fitted", np.array([once], dtype=float)))
        print(spread_line("the fit drawn again", np.array(fit_only, dtype=float)))
        print(spread_line("and the judging too", np.array(both, dtype=float)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    sets, _ = every_set()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="spread-")), embedder="local")
    features = [extract(s, settings) for s in sets]
    G.use_styles(features)
    fitted = G.DEFAULT.loso(features)
    spread_table(features, fitted, args.draws, args.seed)


if __name__ == "__main__":
    main()
