"""The title as a second meaning (issue 50): a lead screened offline, not built (docs/evaluation.md).

    python -m bench.title_meaning          # after python -m bench.generalise, whose cached features it reads

An entry's stored vector is its four signal lines; on a runbook page most of that text is the procedure,
while the alert's words are in the title. Each entry's title is embedded alone here (as an alert is), and an
answer's meaning read as the better of its stored vector's cosine and its title's. Printed:

  - meaning alone (dense MRR, the set's own measure; an again or post-mortem question without its own entry):
    the stored vector, the better of the two, and their mean;
  - the ranking: every candidate the default lookup read re-scored with the better of the two, every tunable
    fitted again with each style left out (`bench.generalise`), the left-out MRR per set and the per-style
    table. The candidates are the lookup's own: a title alone brings no new one in here.

With `--evidence`, confidence reads the better of the two as well: each candidate's meaning, how far it
stands above the others and above the lookup's background, and its standing, against a null measured the
same way (the probes' best of the two in that memory; its neighbours as measured); the calibration is fitted
again with each style left out. Without it, confidence reads the stored vector's meaning, and the table's
confidence columns are not the lead's.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from bench import generalise as G
from bench.features import C, alert_of, extract
from bench.sections import mrr, unit
from bench.sets.load import every_set
from oncall_memory.answer.confidence import FEATURES
from oncall_memory.answer.scale import MIN_SPAN, PROBES
from oncall_memory.domain.distill import distill, distill_alert
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings

MEANING, STANDOUT, ABOVE, STANDING = (FEATURES.index(f) for f in ("meaning", "standout", "above", "standing"))


def read_again(evidence: np.ndarray, meanings: np.ndarray, null: float, neighbours: float) -> np.ndarray:
    """The candidates' evidence with their meaning the better of the two, as `retrieve.evidence` reads it."""
    e = np.array(evidence, dtype=float)
    best = np.sort(meanings)[::-1]
    runner = best[1] if len(best) > 1 else best[0]
    e[:, MEANING] = meanings
    e[:, STANDOUT] = np.where(meanings >= best[0], meanings - runner, meanings - best[0])
    e[:, ABOVE] = meanings - best[len(best) // 2]
    e[:, STANDING] = (meanings - null) / max(neighbours - null, MIN_SPAN)
    return e


def scale_of(features: list[np.ndarray]) -> tuple[float, float]:
    """The memory's (null, neighbours), read back from its evidence: the standing is linear in meaning."""
    rows = np.vstack(features)
    slope, at_zero = np.polyfit(rows[:, MEANING], rows[:, STANDING], 1)
    null = -at_zero / slope
    return float(null), float(null + 1 / slope)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--evidence", action="store_true", help="confidence reads the better of the two too")
    args = parser.parse_args()
    sets, missing = every_set()
    for line in missing:
        print(line)
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="title-meaning-")), embedder="local")
    features = [extract(s, settings) for s in sets]
    G.use_styles(features)
    before = G.left_out(features, G.DEFAULT.loso(features))
    print("meaning alone (dense MRR): the stored vector / the better of it and the title's / their mean")
    with Memory.open(settings) as memory:
        embedder = memory.embedder
        probes = unit(embedder.embed([distill_alert(p) for p in PROBES]))
        for s, f in zip(sets, features):
            ids = [i.id for i in s.incidents]
            stored = unit(embedder.embed([distill(i) for i in s.incidents]))
            title_vectors = unit(embedder.embed([distill_alert(i.title) for i in s.incidents]))
            titles = dict(zip(ids, title_vectors))
            alerts = unit(embedder.embed([distill_alert(alert_of(q, memory)[0].text) for q in s.queries]))
            by_title = alerts @ title_vectors.T
            whole = alerts @ stored.T
            keep = [k for k, q in enumerate(s.queries) if q.strict or q.lenient]
            right = [set(s.queries[k].strict or s.queries[k].lenient) for k in keep]
            own = [s.queries[k].own for k in keep]
            row = [whole[keep], np.maximum(whole, by_title)[keep], ((whole + by_title) / 2)[keep]]
            print(f"  {s.name:12s} " + " / ".join(f"{mrr(x, ids, right, own):.3f}" for x in row))
            # The ranking's candidates re-scored: their meaning the better of the two.
            null, neighbours = scale_of([q.evidence for q in f.queries if q.ids])
            both = np.maximum(probes @ stored.T, probes @ title_vectors.T)
            null_again = float(np.median(both.max(axis=1)))
            for q, a in zip(f.queries, alerts):
                if q.ids:
                    t = np.array([float(titles[i] @ a) for i in q.ids])
                    q.x = q.x.copy()
                    q.x[:, C["sim"]] = np.maximum(q.x[:, C["sim"]], t)
                    if args.evidence:
                        q.evidence = read_again(q.evidence, q.x[:, C["sim"]], null_again, neighbours)
            if args.evidence:
                print(f"  {'':12s} null {null:.3f} -> {null_again:.3f}, neighbours {neighbours:.3f}")
    fitted = G.DEFAULT.loso(features)
    after = G.left_out(features, fitted)
    print("\nthe ranking, each style left out (MRR): stored -> the better of the two")
    for name in before:
        print(f"  {name:12s} {before[name].mean():.3f} -> {after[name].mean():.3f}")
    mean = [np.mean([v.mean() for v in x.values()]) for x in (before, after)]
    print(f"  {'mean':12s} {mean[0]:.3f} -> {mean[1]:.3f}")
    G.style_table(features, fitted)


if __name__ == "__main__":
    main()
