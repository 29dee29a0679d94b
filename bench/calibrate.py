"""How the confidence thresholds were chosen (`oncall_memory/answer/confidence.py`), reproducibly.

    python -m bench.calibrate            # the configured embedder (the local model by default)

Ingests the sample backlog into a scratch store, looks up every query of the shipped sets (labels,
alerts: their first answer is right or not) and of the no-match set, and reads each top answer's evidence
(the evidence confidence reads, a shared symptom, a signature match). Then, for each candidate `low_below`, prints the share
of no-match alerts marked low and of right first answers marked low; picks the threshold that marks at
least 90% of no-match alerts low while marking the fewest right answers low; and checks that choice by
two-fold cross-validation (fit on odd-numbered queries, score the even, and the other way round), so the
figure reported is not only the one fitted. `high_from` is the lowest evidence whose top answers are
right at least 95% of the time and which no no-match alert reaches.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from oncall_memory.answer.evaluate import read_labels
from oncall_memory.ingest.backlog import read_jsonl
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "oncall_memory" / "evalsets"


@dataclass(frozen=True)
class Top:
    matched: bool  # the query has a right answer on record
    right: bool  # and the first answer is it
    evidence: float  # what confidence reads: meaning and the plain share of words (not the ranking's relevance)
    symptom: bool
    pinned: bool


def tops(memory: Memory) -> list[Top]:
    out = []
    for name in ("labels", "alerts", "nomatch"):
        for q in read_labels(SETS / f"{name}.jsonl"):
            lookup = memory.similar(q.alert(memory), filters=q.filters, limit=5)
            if not lookup.neighbours:
                out.append(Top(bool(q.relevant), False, 0.0, False, False))
                continue
            n = lookup.neighbours[0]
            kinds = {b.kind for b in n.boosts}
            evidence = n.evidence if n.evidence is not None else n.relevance
            out.append(Top(bool(q.relevant), n.id in q.relevant, evidence, "symptom" in kinds, n.signature_match))
    return out


def shares(rows: list[Top], low_below: float) -> tuple[float, float]:
    def low(t: Top) -> bool:
        return not (t.symptom or t.pinned) and t.evidence < low_below

    no_match = [t for t in rows if not t.matched]
    right = [t for t in rows if t.right]
    return (sum(map(low, no_match)) / max(1, len(no_match)), sum(map(low, right)) / max(1, len(right)))


def fit_low(rows: list[Top]) -> float:
    candidates = [x / 100 for x in range(20, 71)]
    ok = [c for c in candidates if shares(rows, c)[0] >= 0.9]
    return min(ok, key=lambda c: (shares(rows, c)[1], c)) if ok else candidates[-1]


def fit_high(rows: list[Top]) -> float:
    ceiling = max((t.evidence for t in rows if not t.matched), default=0.0)
    for c in [x / 100 for x in range(30, 91)]:
        above = [t for t in rows if t.matched and t.evidence >= c]
        if c > ceiling and above and sum(t.right for t in above) / len(above) >= 0.95:
            return c
    return 0.9


def main() -> None:
    settings = Settings(data_dir=Path(tempfile.mkdtemp()))
    with Memory.open(settings) as memory:
        memory.ingest(read_jsonl(ROOT / "fixtures" / "incidents.jsonl"))
        rows = tops(memory)
        model = memory.embedder.model
    no_match, right = sum(not t.matched for t in rows), sum(t.right for t in rows)
    print(f"{model}: {right} right first answers, {no_match} no-match alerts")
    print(f"{'low_below':>9} {'no-match low':>13} {'right low':>10}")
    for c in [x / 100 for x in range(30, 56, 2)]:
        a, b = shares(rows, c)
        print(f"{c:>9.2f} {a:>13.0%} {b:>10.0%}")
    low, high = fit_low(rows), fit_high(rows)
    a, b = shares(rows, low)
    print(f"chosen: low_below {low:.2f} (no-match low {a:.0%}, right first answers low {b:.0%}); high_from {high:.2f}")
    odd, even = rows[1::2], rows[0::2]
    for fit_on, score_on, name in (
        (odd, even, "fit on odd, scored on even"),
        (even, odd, "fit on even, scored on odd"),
    ):
        t = fit_low(fit_on)
        a, b = shares(score_on, t)
        print(f"cross-validated ({name}): low_below {t:.2f} -> no-match low {a:.0%}, right first answers low {b:.0%}")


if __name__ == "__main__":
    main()
