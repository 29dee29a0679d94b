"""The generalisation protocol (issues 32 and 50): every tunable fitted on the sets of every style but one,
scored on the style left out, for each style in turn (a style is who wrote the alerts and who wrote the
memory: `sets.load.STYLES`; its sets share a writer, so one of them is no news to a fit on another).

    python -m bench.quality.generalise [--embedder local|fake] [--variants] [--no-cache] [--spread N]

Sets (`bench/quality/sets`): the two shipped ones, and every third-party one built on this machine (the runbook
sets, the post-mortems, the GitHub issues where their texts are here); a line says which are missing and
how to build them. For each left-out set it prints, strict, lenient (the same problem family) and facts-
aware (of those, the same service) MRR side by side: BM25, unranked dense and hybrid, the ranking as it
was before the protocol, and the default procedure (the ranking's tunables fitted on the other sets) with a
bootstrap 95% interval; then the meaning-only (paraphrase) subsets; then confidence, its two logistic models
fitted on the other sets (the same problem's, which says "high", and the problem family's, which says "low"):
expected calibration error, right first answers marked low, no-match alerts marked low and high, wrong first
answers marked high; then each style's confidence figures over N bootstrap draws of the answers the
calibration is fitted and judged on (`bench.quality.spread`; `--spread 0` leaves it out). Last, the models and
weights fitted on every set: what ships.

    python -m bench.quality.generalise --confidence meaning,words --same-problem meaning,words,service

reads other evidence in the family's and the same problem's model.

`--variants` runs the keep rule (docs/evaluation.md) on each variant of the procedure: a change is kept
only if the left-out mean rises and no set's left-out score falls below the default's interval.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from oncall_memory import Settings
from oncall_memory.answer.confidence import (
    FEATURES,
    Calibration,
    Evidence,
    calibration_for,
    expected_calibration_error,
)

from . import fit as F
from .features import QueryFeatures, SetFeatures, extract
from .protocol import (
    BEFORE,
    CONFIDENCE,
    DEFAULT,
    GRID,
    MEASURES,
    SAME_PROBLEM,
    SAME_USED,
    START,
    USED,
    VARIANTS,
    firsts,
    fit_calibration,
    read_levels,
    style_calibrations,
    style_of,
    use_styles,
)
from .sets.load import every_set
from .spread import spread_table


def fmt(x: float) -> str:
    return "    -" if math.isnan(x) else f"{x:.3f}"


def ranking_table(sets: Sequence[SetFeatures], fitted: dict[str, F.Params]) -> None:
    print("\nRanking, MRR of each set left out (default: fitted on the others; [95% interval] by bootstrap)")
    head = "".join(f"{m:>10}" for m in ("BM25", "dense", "hybrid", "before")) + f"{'default':>10}  interval"
    for s in sets:
        print(f"\n{s.name} ({len(s.queries)} alerts; calibrated on {s.same_problem})")
        print(f"  {'':8}{head}")
        for m in MEASURES:
            n = sum(1 for q in s.queries if getattr(q.query, m))
            if not n or (m != "strict" and all(q.query.lenient == q.query.strict for q in s.queries)):
                continue
            base = [F.rr_vector(s, m, F.baseline(b)).mean() for b in ("BM25", "dense", "hybrid")]
            v = F.rr_vector(s, m, lambda q: F.order(q, fitted[s.name]))
            lo, hi = F.interval(v)
            cells = "".join(f"{fmt(x):>10}" for x in (*base, F.mrr(s, m, BEFORE), v.mean()))
            print(f"  {m + f' ({n})':8}{cells}  [{lo:.3f}, {hi:.3f}]")
        para = replace(s, queries=[q for q in s.queries if q.query.paraphrase and q.query.strict])
        if para.queries:
            base = [F.rr_vector(para, "strict", F.baseline(b)).mean() for b in ("BM25", "dense", "hybrid")]
            cells = "".join(
                f"{fmt(x):>10}" for x in (*base, F.mrr(para, "strict", BEFORE), F.mrr(para, "strict", fitted[s.name]))
            )
            print(f"  {'paraphr.':8}{cells}  ({len(para.queries)} alerts whose runbook says it in other words)")


def confidence_table(sets: Sequence[SetFeatures], fitted: dict[str, F.Params]) -> None:
    print("\nConfidence of each set left out: the model fitted on the others' first answers")
    print(
        f"  {'set':12}{'ECE':>7}{'right low':>13}{'no-match low':>15}{'no-match high':>15}{'wrong high':>12}"
        f"   before: {'right low':>10}{'no-match low':>14}"
    )
    for s in sets:
        train = [firsts(o, fitted[s.name]) for o in sets if style_of(o.name) != style_of(s.name)]
        cal = fit_calibration(train)
        t = firsts(s, fitted[s.name])
        p = np.array([cal.probability(tuple(r)) for r in t.x])  # type: ignore[arg-type]
        levels = t.levels(cal)
        low, high = levels == "low", levels == "high"
        before = np.array([lv == "low" for lv in t.before])

        def share(mask: np.ndarray, of: np.ndarray) -> str:
            return f"{int(mask[of].sum())}/{int(of.sum())}" if of.any() else "-"

        ece = expected_calibration_error(p.tolist(), t.right.tolist())
        print(
            f"  {s.name:12}{ece:>7.3f}{share(low, t.right):>13}{share(low, t.no_match):>15}"
            f"{share(high, t.no_match):>15}{share(high, ~t.right):>12}"
            f"   {'':8}{share(before, t.right):>10}{share(before, t.no_match):>14}"
        )


def style_table(sets: Sequence[SetFeatures], fitted: dict[str, F.Params]) -> None:
    """Each style left out whole: MRR of the default against unranked hybrid (each set's primary measure,
    the sets of the style averaged alike), and its confidence: right first answers marked low, no-match
    alerts marked low and high (counted over its sets)."""
    print("\nEach style left out (fitted on the others): the goals are default >= hybrid + 0.02, right first")
    print("answers low <= 20%, no-match alerts low >= 90%, none high")
    print(
        f"  {'style':34}{'sets':>5}{'hybrid':>9}{'default':>9}{'gain':>8}{'right low':>14}{'no-match low':>15}{'high':>6}"
    )
    calibrations = style_calibrations(sets, fitted)
    for style in sorted(calibrations):
        mine = [s for s in sets if style_of(s.name) == style]
        hybrid = np.mean([F.rr_vector(s, F.primary(s), lambda q: q.baselines["hybrid"]).mean() for s in mine])
        default = np.mean([F.rr_vector(s, F.primary(s), F.ranked(fitted[s.name])).mean() for s in mine])
        right, low, none, none_low, none_high = read_levels(
            calibrations[style], [firsts(s, fitted[s.name]) for s in mine]
        )
        share = f"{low}/{right} ({low / right:.0%})" if right else "-"
        nshare = f"{none_low}/{none} ({none_low / none:.0%})" if none else "-"
        print(
            f"  {style:34}{len(mine):>5}{hybrid:>9.3f}{default:>9.3f}{default - hybrid:>+8.3f}{share:>14}{nshare:>15}"
            f"{none_high if none else '-':>6}"
        )


TOP = 5  # the answers a responder reads


def high_table(sets: Sequence[SetFeatures], fitted: dict[str, F.Params], shipped: Calibration) -> None:
    """How often "high" is right among the first TOP answers, not only the first: per set, wrong and right
    answers read high, fitted with the set's style left out (ranking and calibration), and as shipped (the
    product's own order and calibration). Right is the strict answer where the set has one (the same problem),
    else its own measure. The alert's recurrence on record (`Calibration.level`'s `own_on_record`) is read from
    every candidate's evidence: one of the alert's service that tells of its symptom; an answer below the first
    is `ranked_below`, as the product reads it."""
    service, symptom = FEATURES.index("service"), FEATURES.index("symptom")
    print(f'\n"High" among the first {TOP} answers: wrong / right answers read high')

    def count(s: SetFeatures, cal: Calibration, order: Callable[[QueryFeatures], list[str]]) -> str:
        wrong = right = 0
        for q in s.queries:
            answers = set(q.query.strict or getattr(q.query, s.same_problem))
            own = any(e[service] > 0 and e[symptom] > 0 for e in q.evidence)
            for place, i in enumerate(order(q)[:TOP]):
                at = q.ids.index(i)
                pinned = bool(q.x[at, F.C["pinned"]])
                said = tuple(q.evidence[at])
                if cal.level(said, pinned=pinned, own_on_record=own, ranked_below=place > 0) == "high":  # type: ignore[arg-type]
                    right += i in answers
                    wrong += i not in answers
        return f"{wrong} / {right}"

    left_out_and_shipped(sets, fitted, shipped, count)


Count = Callable[[SetFeatures, Calibration, Callable[[QueryFeatures], list[str]]], str]


def left_out_and_shipped(
    sets: Sequence[SetFeatures],
    fitted: dict[str, F.Params],
    shipped: Calibration,
    count: Count,
    *,
    only: Collection[str] | None = None,
) -> None:
    """A row per set (of those named in `only`, if given) of `count`: fitted with the set's style left out (its ranking's
    order, its style's calibration), and as shipped (the product's own order and calibration)."""
    print(f"  {'set':12}{'left out':>14}{'shipped':>14}")
    left = style_calibrations(sets, fitted)
    for s in sets:
        if only is None or s.name in only:
            mine = count(s, left[style_of(s.name)], F.ranked(fitted[s.name]))
            print(f"  {s.name:12}{mine:>14}{count(s, shipped, lambda q: q.ids):>14}")


def nothing_close_table(sets: Sequence[SetFeatures], fitted: dict[str, F.Params], shipped: Calibration) -> None:
    """What the product says of a no-match alert is its lookup's confidence, the surest of the first TOP
    answers (`confidence.overall`), not the first answer's alone: per set, the no-match alerts whose every one
    of the first TOP answers reads low ("nothing close is on record"), fitted with the style left out and as
    shipped. An answer below the first can lift it: one that names the rule's metric, or a pinned one."""
    print(f"\nNo-match alerts whose lookup reads nothing close (all of the first {TOP} answers low)")

    def count(s: SetFeatures, cal: Calibration, order: Callable[[QueryFeatures], list[str]]) -> str:
        low = none = 0
        for q in s.queries:
            if q.query.lenient or not q.ids:
                continue
            none += 1
            low += all(
                cal.level(
                    Evidence(*q.evidence[q.ids.index(i)]),
                    pinned=bool(q.x[q.ids.index(i), F.C["pinned"]]),
                    names_metric=i in q.named,
                )
                == "low"
                for i in order(q)[:TOP]
            )
        return f"{low} / {none}"

    with_no_match = {s.name for s in sets if any(not q.query.lenient and q.ids for q in s.queries)}
    left_out_and_shipped(sets, fitted, shipped, count, only=with_no_match)


def left_out(sets: Sequence[SetFeatures], fitted: dict[str, F.Params]) -> dict[str, np.ndarray]:
    return {s.name: F.rr_vector(s, F.primary(s), F.ranked(fitted[s.name])) for s in sets}


def keep_rule(sets: Sequence[SetFeatures]) -> None:
    """Each variant against the default procedure, by the rule in docs/evaluation.md."""
    base = left_out(sets, DEFAULT.loso(sets))
    mean = np.mean([v.mean() for v in base.values()])
    print(f"\nVariants (the keep rule): default left-out mean {mean:.3f}")
    for variant in VARIANTS:
        got = left_out(sets, variant.loso(sets) if variant.grid else {s.name: variant.start for s in sets})
        vmean = np.mean([v.mean() for v in got.values()])
        fell = [n for n, v in got.items() if v.mean() < F.interval(base[n])[0]]
        kept = vmean > mean and not fell
        cells = " ".join(f"{n} {v.mean():.3f}" for n, v in got.items())
        why = "kept: would replace the default" if kept else "not kept" + (f" ({', '.join(fell)} fell)" if fell else "")
        print(f"  {variant.name:46} mean {vmean:.3f}  {cells}  -> {why}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default="local", choices=("local", "fake"))
    ap.add_argument("--variants", action="store_true", help="run the keep rule on each variant")
    ap.add_argument("--no-cache", action="store_true", help="read every set through the memory again")
    ap.add_argument("--spread", type=int, default=200, metavar="N", help="draws for the style table's spread (0: none)")
    ap.add_argument(
        "--confidence",
        default=",".join(CONFIDENCE),
        help=f"the evidence the family's model reads (default {','.join(CONFIDENCE)}; of {','.join(FEATURES)})",
    )
    ap.add_argument(
        "--same-problem",
        default=",".join(SAME_PROBLEM),
        help=f"the evidence the same problem's model reads (default {','.join(SAME_PROBLEM)})",
    )
    args = ap.parse_args()
    USED[:] = [FEATURES.index(f) for f in args.confidence.split(",")]
    SAME_USED[:] = [FEATURES.index(f) for f in args.same_problem.split(",")]
    sets, missing = every_set()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="generalise-")), embedder=args.embedder)
    features = [extract(s, settings, cache=not args.no_cache) for s in sets]
    print(f"{len(features)} sets, embedder {features[0].model}: " + ", ".join(s.name for s in features))
    for line in missing:
        print(f"  {line}")
    # Leave-one-out sets are left out: the product's candidates hold the alert's own incident there.
    plain = [q for s in features for q in s.queries if not q.query.own]
    same = sum(F.order(q, START)[:10] == q.ids[:10] for q in plain)
    print(f"  the bench's scoring gives the product's own first 10 on {same} of {len(plain)} alerts")
    use_styles(features)
    fitted = DEFAULT.loso(features)
    ranking_table(features, fitted)
    confidence_table(features, fitted)
    style_table(features, fitted)
    if args.spread:
        spread_table(features, fitted, args.spread)
    high_table(features, fitted, calibration_for(features[0].model))
    nothing_close_table(features, fitted, calibration_for(features[0].model))
    everything = F.fit(features, start=START, grid=GRID).params
    print(f"\nFitted on every set (what ships): {everything.text()}")
    cal = fit_calibration([firsts(s, everything) for s in features])
    weights = ", ".join(f"{w:.2f}" for w in cal.weights)
    assert cal.family is not None
    family = ", ".join(f"{w:.2f}" for w in cal.family)
    print(
        f"confidence: Calibration({cal.bias:.2f}, ({weights}), {cal.low_below:.2f}, {cal.high_from:.2f}, "
        f"family=({family}))"
    )
    print(f"  features: {', '.join(FEATURES)}")
    if args.variants:
        keep_rule(features)


if __name__ == "__main__":
    main()
