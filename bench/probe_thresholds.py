"""A low threshold per memory, read from its own probes: tried for issue 50 and not kept (docs/evaluation.md).

    python -m bench.probe_thresholds

Each set's memory looks its 60 probes (`scale.PROBES`) up as alerts, through the whole ranked lookup, and keeps
the first answer's evidence. Then, for each style left out, the confidence model is fitted on the other
styles (`generalise.fit_calibration`) and "low" is decided four ways:

- shipped: one threshold, pooled over the training sets (what ships);
- quantile: under a quantile of this memory's probes' probabilities;
- shift: the logit over the median of its probes' logits, under a margin;
- mad: the same in median absolute deviations of its probes' logits.

The quantile and the margins are fitted on the training styles by the shipped rule (at least 90% of their
no-match alerts low, fewest right answers low). It prints, per style, the right first answers and the no-match
alerts marked low. The sets' features come from `generalise`'s cache (run it first); the probes are looked up
again here (a minute).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from oncall_memory import Memory, Settings
from oncall_memory.answer.confidence import Calibration
from oncall_memory.answer.evaluate import LabelledQuery
from oncall_memory.answer.scale import PROBES

from . import generalise as G
from .features import NOW, SetFeatures, extract
from .sets.load import every_set


def probe_evidence(sets: Sequence) -> dict[str, np.ndarray]:
    """Each set's memory: the probes' first answers' evidence, one row per probe (standout among the candidates,
    as `features.extract` reads it). Sets that share a memory share its rows."""
    out: dict[str, np.ndarray] = {}
    done: dict[tuple[str, ...], np.ndarray] = {}
    for s in sets:
        key = tuple(sorted(i.id for i in s.incidents))
        if key not in done:
            settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="probes-")))
            rows = []
            with Memory.open(settings) as memory:
                memory.ingest(s.incidents)
                memory.measure_scale()
                for probe in PROBES:
                    found = memory.similar(LabelledQuery(text=probe, relevant=[]).alert(memory), limit=50, now=NOW)
                    if not found.neighbours or found.neighbours[0].evidence is None:
                        continue
                    sims = [nb.similarity or 0.0 for nb in found.neighbours]
                    row = list(found.neighbours[0].evidence)
                    row[1] = sims[0] - max(sims[1:], default=sims[0])
                    rows.append(row)
            done[key] = np.array(rows)
        out[s.name] = done[key]
    return out


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return np.log(p / (1 - p))


def _probs(cal: Calibration, x: np.ndarray) -> np.ndarray:
    return np.array([cal.probability(tuple(r)) for r in x])  # type: ignore[arg-type]


Rule = Callable[[np.ndarray, np.ndarray, float], np.ndarray]  # (probabilities, the probes', c) -> low


def _shipped(p: np.ndarray, probes: np.ndarray, c: float) -> np.ndarray:
    return p < c


def _quantile(p: np.ndarray, probes: np.ndarray, c: float) -> np.ndarray:
    return p < np.quantile(probes, c)


def _shift(p: np.ndarray, probes: np.ndarray, c: float) -> np.ndarray:
    return _logit(p) - np.median(_logit(probes)) < c


def _mad(p: np.ndarray, probes: np.ndarray, c: float) -> np.ndarray:
    lp = _logit(probes)
    med = np.median(lp)
    return (_logit(p) - med) / (np.median(np.abs(lp - med)) or 1e-3) < c


RULES: dict[str, tuple[Rule, list[float]]] = {
    "shipped": (_shipped, [round(c, 2) for c in np.arange(0.02, 0.99, 0.01)]),
    "quantile": (_quantile, [round(c, 2) for c in np.arange(0.5, 1.0, 0.01)]),
    "shift": (_shift, [round(c, 2) for c in np.arange(-3, 6, 0.05)]),
    "mad": (_mad, [round(c, 1) for c in np.arange(-3, 15, 0.1)]),
}


def main() -> None:
    sets, _ = every_set()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="probe-thresholds-")))
    features: list[SetFeatures] = [extract(s, settings) for s in sets]
    probes = probe_evidence(sets)
    G.use_styles(features)
    fitted = G.DEFAULT.loso(features)
    styles = sorted({G.style_of(s.name) for s in features})
    for name, (rule, steps) in RULES.items():
        print(name)
        shares = []
        for style in styles:
            mine = [s for s in features if G.style_of(s.name) == style]
            train = [(o.name, G.firsts(o, fitted[mine[0].name])) for o in features if G.style_of(o.name) != style]
            cal = G.fit_calibration([t for _, t in train])
            scored = [(_probs(cal, t.x), _probs(cal, probes[n]), t) for n, t in train]

            def no_match_low(c: float, scored: list = scored, rule: Rule = rule) -> float:
                low = sum(int(rule(p, q, c)[t.no_match].sum()) for p, q, t in scored)
                return low / max(1, sum(int(t.no_match.sum()) for _, _, t in scored))

            def right_low(c: float, scored: list = scored, rule: Rule = rule) -> float:
                return float(np.mean([rule(p, q, c)[t.right].mean() for p, q, t in scored if t.right.any()]))

            ok = [c for c in steps if no_match_low(c) >= 0.9]
            c = min(ok, key=lambda c: (right_low(c), c)) if ok else steps[-1]
            right = low = none = none_low = 0
            for s in mine:
                t = G.firsts(s, fitted[s.name])
                lows = rule(_probs(cal, t.x), _probs(cal, probes[s.name]), c)
                right, low = right + int(t.right.sum()), low + int(lows[t.right].sum())
                none, none_low = none + int(t.no_match.sum()), none_low + int(lows[t.no_match].sum())
            shares.append(low / right)
            print(
                f"  {style:34} c={c:6.2f}  right first answers low {low}/{right} ({low / right:.0%})"
                f"  no-match low {none_low}/{none}"
            )
        print(f"  mean share of right first answers low: {np.mean(shares):.0%}")


if __name__ == "__main__":
    main()
