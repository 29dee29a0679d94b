"""Two other anchors for the standing, tried by the protocol and not kept (docs/evaluation.md, issue 50).

    python -m bench.scale_anchors titles [--beside]
    python -m bench.scale_anchors other-problem [--nearest 3] [--beside]
    python -m bench.scale_anchors hub [--nearest 10] [--beside]
    python -m bench.scale_anchors density --form constant|product|ratio
    python -m bench.scale_anchors words --column idf|idf_known|bm25|rarity [--times-density]

The shipped standing reads an answer's meaning between the memory's null (what 60 everyday probes score) and
its neighbours (how close its own incidents stand). Each is measured here on the memory alone, no label read:

  - titles: the "1" is the median meaning of each incident's title, distilled as an alert is, against its
    own entry;
  - other-problem: the null is the median best meaning of each title against every entry but its own and its
    `--nearest` nearest (by entry-to-entry meaning): the same product, another problem.

  - hub: not an anchor for the memory but for each entry, as CSLS corrects "hubs" in cross-lingual retrieval:
    how close the entry stands to the everyday probes (the mean of its `--nearest` best), subtracted from
    the answer's meaning. A generic entry that every alert comes near reads lower.

  - density: how close the memory's own incidents stand (the shipped standing's upper anchor) as a further
    feature, so that the model may learn a threshold that moves with it: as a constant per memory, times the
    answer's meaning, or dividing it.

  - words: evidence of the specific problem rather than a scale, beside the standing: the share of the
    alert's words the answer holds weighed by their rarity (`--column`, one of the bench's columns: IDF in the
    whole memory, IDF over the words the memory knows, BM25's score over the best, rarity among the candidates);
    `--times-density`: weighed by how close the memory's own incidents stand, so that the words count most
    where meaning cannot tell a sibling problem from the same one.

The standing is read against it in place of the shipped one (or beside it as a further feature, `--beside`),
and the confidence model refitted with each style left out, as `bench.generalise` does. Reads the protocol's
cached features (run `python -m bench.generalise` first) and embeds each set's incidents with the local model.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

import numpy as np

from oncall_memory import Settings
from oncall_memory.answer.confidence import FEATURES
from oncall_memory.answer.scale import PROBES
from oncall_memory.domain.distill import distill, distill_alert
from oncall_memory.embedders import make_embedder

from . import generalise as G
from .features import C, extract
from .sets.load import every_set

MEANING, STANDING, SPARE = FEATURES.index("meaning"), FEATURES.index("standing"), FEATURES.index("title")
SAMPLE = 200


def unit(vectors: list[list[float]]) -> np.ndarray:
    a = np.asarray(vectors, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def shipped_scale(features: G.SetFeatures) -> tuple[float, float]:
    """The memory's null and neighbours as the product read them: standing = (meaning - null) / span, solved
    from its candidates' evidence."""
    ev = np.vstack([q.evidence for q in features.queries if len(q.evidence)])
    ok = ev[:, MEANING] > 0
    slope, intercept = np.polyfit(ev[ok, MEANING], ev[ok, STANDING], 1)
    null = -intercept / slope
    return null, null + 1 / slope


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("anchor", choices=("titles", "other-problem", "hub", "density", "words"))
    ap.add_argument("--column", choices=("idf", "idf_known", "bm25", "rarity"), default="idf")
    ap.add_argument("--times-density", action="store_true", help="words: times the memory's density")
    ap.add_argument("--form", choices=("constant", "product", "ratio"), default="constant")
    ap.add_argument("--nearest", type=int, help="other-problem: entries left out (3); hub: probes averaged (10)")
    ap.add_argument("--beside", action="store_true", help="a further feature beside the shipped standing")
    args = ap.parse_args()
    sets, _ = every_set()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="anchors-")), embedder="local")
    features = [extract(s, settings) for s in sets]
    embedder = make_embedder(settings)
    nearest = args.nearest or (10 if args.anchor == "hub" else 3)
    if args.anchor == "hub":
        probes = unit(embedder.embed([distill_alert(p) for p in PROBES]))
    for s, f in zip(sets, features):
        if args.anchor == "hub":
            entries = unit(embedder.embed([distill(i) for i in s.incidents]))
            hub = np.sort(entries @ probes.T, axis=1)[:, -nearest:].mean(1)
            of = {i.id: h for i, h in zip(s.incidents, hub)}
            print(f"{f.name:12} hub median {np.median(hub):.3f}  p10 {np.quantile(hub, 0.1):.3f}")
            for q in f.queries:
                if len(q.evidence):
                    h = np.array([of.get(i, np.median(hub)) for i in q.ids[: len(q.evidence)]])
                    value = q.evidence[:, MEANING] - h
                    value[q.evidence[:, MEANING] == 0] = 0.0
                    q.evidence[:, SPARE if args.beside else STANDING] = value
            continue
        if args.anchor == "words":  # always beside the standing
            density = shipped_scale(f)[1] if args.times_density else 1.0
            for q in f.queries:
                if len(q.evidence):
                    q.evidence[:, SPARE] = np.nan_to_num(q.x[:, C[args.column]].astype(float)) * density
            continue
        null, top = shipped_scale(f)
        if args.anchor == "density":  # always beside the standing
            print(f"{f.name:12} neighbours {top:.3f}")
            for q in f.queries:
                if len(q.evidence):
                    m = q.evidence[:, MEANING]
                    value = {"constant": np.full(len(m), top), "product": m * top, "ratio": m / top}[args.form]
                    value[m == 0] = 0.0
                    q.evidence[:, SPARE] = value
            continue
        incidents = sorted(s.incidents, key=lambda i: hashlib.sha256(i.id.encode()).hexdigest())
        if args.anchor == "titles":
            incidents = incidents[:SAMPLE]
        entries = unit(embedder.embed([distill(i) for i in incidents]))
        titles = unit(embedder.embed([distill_alert(i.title) for i in incidents]))
        if args.anchor == "titles":
            top = float(np.median((entries * titles).sum(1)))
        else:
            between = entries @ entries.T
            np.fill_diagonal(between, -1)
            asked = titles @ entries.T
            best = []
            for i in range(len(incidents)):
                row = asked[i].copy()
                row[[i, *np.argsort(-between[i])[:nearest]]] = -1
                best.append(row.max())
            null = float(np.median(best))
        print(f"{f.name:12} null {null:.3f}  top {top:.3f}")
        for q in f.queries:
            if not len(q.evidence):
                continue
            standing = (q.evidence[:, MEANING] - null) / max(top - null, 0.05)
            standing[q.evidence[:, MEANING] == 0] = 0.0
            q.evidence[:, SPARE if args.beside else STANDING] = standing
    if args.beside or args.anchor in ("density", "words"):
        G.USED[:] = [FEATURES.index(x) for x in (*G.CONFIDENCE, "title")]
    G.use_styles(features)
    G.style_table(features, G.DEFAULT.loso(features))


if __name__ == "__main__":
    main()
