"""How meaning and words make relevance: what the protocol says of other ways (issue 50, message rules).

    python -m bench.relevance_variants ceiling
    python -m bench.relevance_variants density-share
    python -m bench.relevance_variants normalised --how minmax|dbsf
    python -m bench.relevance_variants rrf
    python -m bench.relevance_variants metric --weight 0.06|symptom [--decided-out]

On a memory of one runbook page (the message-rules style) no fact moves a candidate: relevance alone
ranks, `(1 - share) x meaning + share x words`. Each scheme below is judged as `bench.generalise` judges
the default, on its cached features (run it first): fitted with each style left out, then the style table.

  - ceiling: each style fitted on its own sets, the left-out rule broken on purpose: the most the
    ranking's tunables can give a style, as an upper bound, not a result;
  - density-share: the words' share read from the memory's own density (how close its incidents stand, which
    it measures itself: 0.55-0.57 for incidents and post-mortems, 0.79-0.80 for runbook pages), as
    `share + slope x (density - 0.55) / 0.25`, the slope fitted beside the other tunables;
  - normalised: meaning rescaled over the lookup's candidates before it is mixed with words: `minmax` to
    0..1, or `dbsf` (Qdrant's distribution-based score fusion: mean +- 3 standard deviations to 0..1, the
    words too);
  - rrf: reciprocal-rank fusion of the candidates' meaning and word ranks (k = 60, scaled to 0..1) added
    to relevance, its weight fitted beside the other tunables;
  - metric: a candidate that names a metric the alert's rule watches (`ranking.METRIC`, weight 0 as shipped)
    given a fixed weight, or the shared symptom's fitted weight (`symptom`): only message rules' answers name
    their alert's metrics, so no fit with that style left out can set it. `--decided-out` leaves the answers a
    rule reads as never low out of the "low" threshold's pool (the threshold cannot move them).
"""

from __future__ import annotations

import argparse
import functools
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from oncall_memory import Settings

from . import fit as F
from . import generalise as G
from .features import QueryFeatures, SetFeatures, extract
from .scale_anchors import shipped_scale
from .sets.load import every_set

C = F.C
BASE_SCORES = F.scores
SLOPES = (-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
RRF_WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
# The extra tunable of a scheme, for the set being scored (read by the patched `F.scores`).
EXTRA: dict[str, float] = {"value": 0.0}


def rescaled(v: np.ndarray, how: str) -> np.ndarray:
    if how == "minmax":
        lo, hi = v.min(), v.max()
        return (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)
    mean, sd = v.mean(), v.std()
    if sd == 0:
        return np.full_like(v, 0.5)
    return np.clip((v - mean + 3 * sd) / (6 * sd), 0, 1)


def normalised_scores(how: str) -> Callable[[np.ndarray, F.Params], np.ndarray]:
    def scores(x: np.ndarray, p: F.Params) -> np.ndarray:
        if not len(x):
            return BASE_SCORES(x, p)
        x = x.copy()
        x[:, C["sim"]] = rescaled(x[:, C["sim"]], how)
        if how == "dbsf":
            x[:, C[p.share]] = rescaled(x[:, C[p.share]], how)
        return BASE_SCORES(x, p)

    return scores


def rrf_scores(x: np.ndarray, p: F.Params) -> np.ndarray:
    s = BASE_SCORES(x, p)
    if not len(x) or not EXTRA["value"]:
        return s
    meaning, words = x[:, C["sim"]], x[:, C["lex"]]
    by_meaning = np.empty(len(x))
    by_meaning[np.argsort(-meaning, kind="stable")] = np.arange(1, len(x) + 1)
    by_words = np.empty(len(x))
    by_words[np.argsort(-words, kind="stable")] = np.arange(1, len(x) + 1)
    fused = 1 / (60 + by_meaning) + np.where(words > 0, 1 / (60 + by_words), 0.0)
    return s + EXTRA["value"] * fused / (2 / 61)


def metric_order(weight: str) -> Callable[[object, F.Params], list[str]]:
    """`F.order` with the candidates that name the alert's rule's metric lifted by `weight`."""
    plain = F.order

    def order(q: object, p: F.Params) -> list[str]:
        assert isinstance(q, QueryFeatures)
        w = p.weight("symptom") if weight == "symptom" else float(weight)
        return plain(q, p, lift=w * np.array([i in q.named for i in q.ids], float))

    return order


def fit_with_extra(
    sets: Sequence[SetFeatures], values: Sequence[float], applied: Callable[[F.Params, float, SetFeatures], F.Params]
) -> tuple[F.Params, float]:
    """`bench.fit.fit`'s coordinate ascent with one more tunable, whose value `applied` puts to each set."""

    def objective(p: F.Params, extra: float) -> float:
        EXTRA["value"] = extra
        return float(np.mean([np.mean([F.mrr(s, m, applied(p, extra, s)) for m in F.measures(s)]) for s in sets]))

    p, extra = G.START, 0.0
    best = objective(p, extra)
    for _ in range(5):
        moved = False
        for name, grid in [*G.GRID.items(), ("extra", values)]:
            for v in grid:
                if v == (extra if name == "extra" else F._get(p, name)):
                    continue
                cp, ce = (p, float(v)) if name == "extra" else (F._set(p, name, v), extra)  # type: ignore[arg-type]
                if (score := objective(cp, ce)) > best + 1e-9:
                    p, extra, best, moved = cp, ce, score, True
        if not moved:
            break
    return p, extra


def style_table(features: list[SetFeatures], fitted: dict[str, tuple[F.Params, float]]) -> None:
    """`generalise.style_table`, each set's extra tunable set as it is scored."""
    extra_of = {id(p): extra for p, extra in fitted.values()}
    plain_order = F.order

    def order(q: object, p: F.Params) -> list[str]:
        EXTRA["value"] = extra_of.get(id(p), 0.0)
        return plain_order(q, p)  # type: ignore[arg-type]

    F.order = order  # type: ignore[assignment]
    try:
        for s in features:
            p, extra = fitted[s.name]
            v = F.rr_vector(s, F.primary(s), lambda q, p=p: F.order(q, p))
            h = F.rr_vector(s, F.primary(s), lambda q: q.baselines["hybrid"])
            print(f"  {s.name:12} {v.mean():.3f} (hybrid {h.mean():.3f})  extra {extra:g}  {p.text()}")
        G.style_table(features, {name: p for name, (p, _) in fitted.items()})
    finally:
        F.order = plain_order  # type: ignore[assignment]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scheme", choices=("ceiling", "density-share", "normalised", "rrf", "metric"))
    ap.add_argument("--weight", default="symptom", help="metric: a number, or `symptom` (its fitted weight)")
    ap.add_argument("--decided-out", action="store_true", help="metric: the threshold read without ruled answers")
    ap.add_argument("--how", choices=("minmax", "dbsf"), default="minmax", help="normalised: how")
    args = ap.parse_args()
    sets, _ = every_set()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="relevance-")), embedder="local")
    features = [extract(s, settings) for s in sets]
    G.use_styles(features)
    styles = sorted({G.style_of(s.name) for s in features})
    if args.scheme == "ceiling":
        for style in styles:
            mine = [s for s in features if G.style_of(s.name) == style]
            p = F.fit(mine, start=G.START, grid=G.GRID).params
            hybrid = np.mean([F.rr_vector(s, F.primary(s), lambda q: q.baselines["hybrid"]).mean() for s in mine])
            ranked = np.mean([F.rr_vector(s, F.primary(s), lambda q: F.order(q, p)).mean() for s in mine])
            print(f"{style:34} fitted on itself {ranked:.3f}, hybrid {hybrid:.3f}, gain {ranked - hybrid:+.3f}")
            print(f"{'':34} {p.text()}")
        return
    if args.scheme == "metric":
        F.order = metric_order(args.weight)  # type: ignore[assignment]
        if args.decided_out:
            G.fit_calibration = functools.partial(G.fit_calibration, decided_out=True)  # type: ignore[assignment]
        fitted = G.DEFAULT.loso(features)
        style_table(features, {name: (p, 0.0) for name, p in fitted.items()})
        return
    if args.scheme == "normalised":
        F.scores = normalised_scores(args.how)  # type: ignore[assignment]
        fitted = G.DEFAULT.loso(features)
        style_table(features, {name: (p, 0.0) for name, p in fitted.items()})
        return
    if args.scheme == "density-share":
        density = {s.name: shipped_scale(s)[1] for s in features}
        print("densities: " + ", ".join(f"{name} {d:.3f}" for name, d in density.items()))

        def applied(p: F.Params, slope: float, s: SetFeatures) -> F.Params:
            share = p.lexical_share + slope * (density[s.name] - 0.55) / 0.25
            return replace(p, lexical_share=float(np.clip(share, 0.0, 0.9))) if slope else p

        values: Sequence[float] = SLOPES
    else:
        F.scores = rrf_scores  # type: ignore[assignment]

        def applied(p: F.Params, weight: float, s: SetFeatures) -> F.Params:
            return p

        values = RRF_WEIGHTS
    by_style = {
        style: fit_with_extra([o for o in features if G.style_of(o.name) != style], values, applied) for style in styles
    }
    fitted = {}
    for s in features:
        p, extra = by_style[G.style_of(s.name)]
        fitted[s.name] = (replace(applied(p, extra, s)), extra)  # its own object: the extra is found by it
    style_table(features, fitted)


if __name__ == "__main__":
    main()
