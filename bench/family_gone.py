"""An incident fired again whose whole family is not on record: what the confidence says of its first answer.

    python -m bench.family_gone          # after python -m bench.generalise, whose cached features it reads

The protocol's incident-shaped questions (`again`: each sample incident fired again among the others;
`postmortems`: each post-mortem among the others) all have their family on record, so no set asks the
question whose honest answer is "nothing like this before". Here each of those questions is asked again with
its family left out of the answers (by a fixed rule: every incident of its family, and itself), and its first
answer is read as a no-match. No lookup is run: the candidates are the cached ones, in the ranking's order, the
family's taken away, and the first answer's standout read again among the rest.

It prints, per set, for the shipped calibration and for the one fitted with the set's style left out (as
`generalise` fits it): right first answers (family on record) marked low, family-gone first answers marked low
and high, and how well meaning alone and the calibration's probability tell the two apart (AUC). Then the
protocol's style table as it would read with these questions added to their style as no-match sets.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from oncall_memory import Settings
from oncall_memory.answer.confidence import CALIBRATED, FEATURES, Calibration

from . import fit as F
from . import generalise as G
from .features import SetFeatures, extract
from .sets.load import every_set

INCIDENT_SHAPED = ("again", "postmortems")  # leave-one-out sets whose answers are the question's family
MEANING, STANDOUT = FEATURES.index("meaning"), FEATURES.index("standout")


def family_gone(s: SetFeatures, p: F.Params) -> np.ndarray:
    """Each question's first answer outside its family, as evidence rows (standout among the others left)."""
    rows = []
    for q in s.queries:
        family = {*q.query.lenient, *([q.query.own] if q.query.own else [])}
        order = [i for i in F.order(q, p) if i not in family]
        if not order:
            continue
        at = [q.ids.index(i) for i in order]
        row = np.array(q.evidence[at[0]], dtype=float)
        sims = [float(q.evidence[i][MEANING]) for i in at]
        row[STANDOUT] = sims[0] - max(sims[1:], default=sims[0])
        rows.append(row)
    return np.array(rows).reshape(len(rows), len(FEATURES))


def auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """The chance a right answer scores above a family-gone one (ties count half)."""
    a, b = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(((a > b) + 0.5 * (a == b)).mean()) if len(pos) and len(neg) else float("nan")


def report(name: str, cal: Calibration, right: np.ndarray, gone: np.ndarray) -> None:
    def levels(x: np.ndarray) -> np.ndarray:
        return np.array([cal.level(tuple(r)) for r in x])  # type: ignore[arg-type]

    def probs(x: np.ndarray) -> list[float]:
        return [cal.probability(tuple(r)) for r in x]  # type: ignore[arg-type]

    lr, lg = levels(right), levels(gone)
    print(
        f"  {name:28} right low {int((lr == 'low').sum())}/{len(lr)}"
        f"   family gone: low {int((lg == 'low').sum())}/{len(lg)}, high {int((lg == 'high').sum())}"
        f"   AUC meaning {auc(right[:, MEANING], gone[:, MEANING]):.3f}, probability {auc(probs(right), probs(gone)):.3f}"
    )


def as_no_match(rows: np.ndarray) -> G.Firsts:
    """Family-gone first answers as a set's first answers: every one a no-match."""
    none = np.ones(len(rows), dtype=bool)
    return G.Firsts(rows, ~none, none, ["low"] * len(rows), ~none)


def with_them_in_the_protocol(features: Sequence[SetFeatures], fitted: dict[str, F.Params]) -> None:
    """Each style left out, as `generalise.style_table` reads confidence, with the family-gone questions added
    to their style as a no-match set: in the training styles' first answers, and in the left-out style's."""
    gone = {s.name: as_no_match(family_gone(s, fitted[s.name])) for s in features if s.name in INCIDENT_SHAPED}
    print("\nWere they in the protocol (each style left out; no-match counts include them):")
    for style in sorted({G.style_of(s.name) for s in features}):
        mine = [s for s in features if G.style_of(s.name) == style]
        others = [o for o in features if G.style_of(o.name) != style]
        train = [G.firsts(o, fitted[mine[0].name]) for o in others]
        cal = G.fit_calibration(train + [gone[o.name] for o in others if o.name in gone])
        right = low = none = none_low = none_high = 0
        for t in [G.firsts(s, fitted[s.name]) for s in mine] + [gone[s.name] for s in mine if s.name in gone]:
            levels = np.array([cal.level(tuple(r)) for r in t.x])  # type: ignore[arg-type]
            right, low = right + int(t.right.sum()), low + int((levels[t.right] == "low").sum())
            none, none_low = none + int(t.no_match.sum()), none_low + int((levels[t.no_match] == "low").sum())
            none_high += int((levels[t.no_match] == "high").sum())
        print(
            f"  {style:34} right low {low}/{right} ({low / max(right, 1):.0%})"
            f"   no-match low {none_low}/{none} ({none_low / max(none, 1):.0%}), high {none_high}"
        )


def main() -> None:
    sets, _ = every_set()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="family-gone-")))
    features: list[SetFeatures] = [extract(s, settings) for s in sets]
    G.use_styles(features)
    fitted = G.DEFAULT.loso(features)
    for s in features:
        if s.name not in INCIDENT_SHAPED:
            continue
        t = G.firsts(s, fitted[s.name])
        right, gone = t.x[t.right], family_gone(s, fitted[s.name])
        print(f"{s.name}: {len(right)} right first answers, {len(gone)} questions asked with their family gone")
        report("shipped calibration", CALIBRATED[s.model], right, gone)
        train = [G.firsts(o, fitted[s.name]) for o in features if G.style_of(o.name) != G.style_of(s.name)]
        report("its style left out", G.fit_calibration(train), right, gone)
    with_them_in_the_protocol(features, fitted)


if __name__ == "__main__":
    main()
