"""How sure an answer is: `high`, `medium` or `low`, for each neighbour and for the lookup as a whole.

A weak match must read as weak: "nothing close is on record" rather than a fix to apply at 3 a.m. The
evidence is what says the problem is the same, never where it happened (a shared service or env moves
the ranking, not the confidence): 0.7 x meaning + 0.3 x the plain share of the alert's words the
incident holds (not the ranking's rarity-weighted share: that depends on what else the lookup found), an
exact signature match, and a canonical symptom both tell of (ops vocabulary).

- high: an exact signature match, or evidence at or above `high_from`;
- low: evidence below `low_below`, with no symptom in common and no signature match;
- medium: the rest.

The thresholds depend on the embedding model (cosines of different models live on different scales), so
they are calibrated per model on labelled data (`oncall-memory eval` prints the abstention figures; see
docs/evaluation.md for the method and the figures). A model without a calibration here uses
all-MiniLM-L6-v2's; set ONCALL_MEMORY_CONFIDENCE_LOW_BELOW / _HIGH_FROM after running `eval` on your own
history with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["high", "medium", "low"]
LEVELS: tuple[Level, ...] = ("high", "medium", "low")


@dataclass(frozen=True)
class Thresholds:
    low_below: float
    high_from: float


# Calibrated with `python -m bench.calibrate` on the shipped sets (78 right first answers) and the
# no-match set (40 alerts): see docs/evaluation.md.
CALIBRATED = {
    "all-MiniLM-L6-v2": Thresholds(low_below=0.45, high_from=0.51),
    # The test double (bag-of-words vectors), calibrated the same way: a weak model, so more right answers
    # are marked low (29%): it is for tests, not for use.
    "fake-bow": Thresholds(low_below=0.36, high_from=0.47),
}
DEFAULT = CALIBRATED["all-MiniLM-L6-v2"]


def thresholds_for(model: str, low_below: float | None = None, high_from: float | None = None) -> Thresholds:
    """The model's calibrated thresholds, with any the settings give instead."""
    base = CALIBRATED.get(model, DEFAULT)
    return Thresholds(
        low_below if low_below is not None else base.low_below,
        high_from if high_from is not None else base.high_from,
    )


def level(evidence: float, *, pinned: bool, same_symptom: bool, meaning: bool, t: Thresholds) -> Level:
    """The confidence of one neighbour. `meaning`: the alert's meaning was compared at all (a words-only
    lookup, with the embedder down, is never high)."""
    if pinned:
        return "high"
    if evidence < t.low_below and not same_symptom:
        return "low"
    if evidence >= t.high_from and meaning:
        return "high"
    return "medium"


def overall(levels: list[Level]) -> Level:
    """A lookup is as sure as its best neighbour; with none, low."""
    return min(levels, key=LEVELS.index) if levels else "low"
