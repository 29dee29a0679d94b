"""Label-free confidence schemes tried by the protocol and not kept (docs/evaluation.md, issue 50).

    python -m bench.scale_anchors titles [--beside]
    python -m bench.scale_anchors other-problem [--nearest 3] [--beside]
    python -m bench.scale_anchors hub [--nearest 10] [--beside]
    python -m bench.scale_anchors lines [--beside]
    python -m bench.scale_anchors density --form constant|product|ratio
    python -m bench.scale_anchors words --column idf|idf_known|bm25|rarity [--times-density]
    python -m bench.scale_anchors symptoms [--in-place]

The shipped standing reads an answer's meaning between the memory's null (what 60 everyday probes score) and
its neighbours (how close its own incidents stand). Each is measured here on the memory alone, no label read:

  - titles: the "1" is the median meaning of each incident's title, distilled as an alert is, against its
    own entry;
  - other-problem: the null is the median best meaning of each title against every entry but its own and its
    `--nearest` nearest (by entry-to-entry meaning): the same product, another problem.

  - hub: not an anchor for the memory but for each entry, as CSLS corrects "hubs" in cross-lingual retrieval:
    how close the entry stands to the everyday probes (the mean of its `--nearest` best), subtracted from
    the answer's meaning. A generic entry that every alert comes near reads lower.

  - lines: not a scale but the alert's best meaning against any one of the answer's four signal lines,
    each embedded alone.

  - density: how close the memory's own incidents stand (the shipped standing's upper anchor) as a further
    feature, so that the model may learn a threshold that moves with it: as a constant per memory, times the
    answer's meaning, or dividing it.

  - words: evidence of the specific problem rather than a scale, beside the standing: the share of the
    alert's words the answer holds weighed by their rarity (`--column`, one of the bench's columns: IDF in the
    whole memory, IDF over the words the memory knows, BM25's score over the best, rarity among the candidates);
    `--times-density`: weighed by how close the memory's own incidents stand, so that the words count most
    where meaning cannot tell a sibling problem from the same one.

  - symptoms: a shared symptom weighed by how few of the lookup's candidates also tell of one (beside the
    shipped evidence, or `--in-place` of the plain shared symptom).

Titles, other-problem, hub and lines replace the shipped standing (or sit beside it as a further feature, `--beside`);
density and words are always beside it. The confidence model is then refitted with each style left out, as
`bench.generalise` does. Reads the protocol's
cached features (run `python -m bench.generalise` first) and embeds each set's incidents with the local model.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from oncall_memory import Settings
from oncall_memory.answer.confidence import FEATURES
from oncall_memory.answer.scale import PROBES
from oncall_memory.domain.distill import distill, distill_alert
from oncall_memory.embedders import make_embedder
from oncall_memory.embedders.base import Embedder

from . import generalise as G
from .features import C, QueryFeatures, extract
from .sets import EvalSet
from .sets.load import every_set

MEANING, STANDING, SPARE = FEATURES.index("meaning"), FEATURES.index("standing"), FEATURES.index("title")
SYMPTOM = FEATURES.index("symptom")
SAMPLE = 200
# A scheme's value for each candidate of one alert, given that alert's features.
Values = Callable[[QueryFeatures], np.ndarray]


def unit(vectors: Sequence[Sequence[float]]) -> np.ndarray:
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


def _meaning(q: QueryFeatures) -> np.ndarray:
    return q.evidence[:, MEANING]


def _compared(value: np.ndarray, q: QueryFeatures) -> np.ndarray:
    value[_meaning(q) == 0] = 0.0  # a candidate whose meaning was not compared reads nothing
    return value


def standing_from(null: float, top: float) -> Values:
    return lambda q: _compared((_meaning(q) - null) / max(top - null, 0.05), q)


def titles(s: EvalSet, f: G.SetFeatures, embedder: Embedder, nearest: int) -> Values:
    """The standing with the memory's own titles, each against its own entry, as its "1"."""
    incidents = _sample(s)[:SAMPLE]
    entries = unit(embedder.embed([distill(i) for i in incidents]))
    asked = unit(embedder.embed([distill_alert(i.title) for i in incidents]))
    null, top = shipped_scale(f)[0], float(np.median((entries * asked).sum(1)))
    print(f"{f.name:12} null {null:.3f}  top {top:.3f}")
    return standing_from(null, top)


def other_problem(s: EvalSet, f: G.SetFeatures, embedder: Embedder, nearest: int) -> Values:
    """The standing with "the same product, another problem" as its null."""
    incidents = _sample(s)
    entries = unit(embedder.embed([distill(i) for i in incidents]))
    asked = unit(embedder.embed([distill_alert(i.title) for i in incidents])) @ entries.T
    between = entries @ entries.T
    np.fill_diagonal(between, -1)
    best = []
    for i in range(len(incidents)):
        row = asked[i].copy()
        row[[i, *np.argsort(-between[i])[:nearest]]] = -1
        best.append(row.max())
    null, top = float(np.median(best)), shipped_scale(f)[1]
    print(f"{f.name:12} null {null:.3f}  top {top:.3f}")
    return standing_from(null, top)


def hub(s: EvalSet, f: G.SetFeatures, embedder: Embedder, nearest: int) -> Values:
    """Meaning less how close the entry stands to the everyday probes (CSLS)."""
    probes = unit(embedder.embed([distill_alert(p) for p in PROBES]))
    entries = unit(embedder.embed([distill(i) for i in s.incidents]))
    near = np.sort(entries @ probes.T, axis=1)[:, -nearest:].mean(1)
    of, usual = {i.id: h for i, h in zip(s.incidents, near)}, float(np.median(near))
    print(f"{f.name:12} hub median {usual:.3f}  p10 {np.quantile(near, 0.1):.3f}")
    return lambda q: _compared(_meaning(q) - np.array([of.get(i, usual) for i in q.ids[: len(q.evidence)]]), q)


def lines(s: EvalSet, f: G.SetFeatures, embedder: Embedder, nearest: int) -> Values:
    """The best meaning of the alert against any one of the answer's signal lines (title, root cause, error
    signature, on-call note), each embedded alone: a right answer tends to match one line closely, a sibling
    problem the whole entry loosely."""
    from oncall_memory.domain.distill import SIGNAL_FIELDS, strip_ceremony, strip_noise
    from oncall_memory.memory import Memory

    from .features import alert_of

    of: dict[str, list[int]] = {}
    texts: list[str] = []
    for i in s.incidents:
        for field in SIGNAL_FIELDS:
            if (value := getattr(i, field)) and (line := strip_noise(strip_ceremony(value))):
                of.setdefault(i.id, []).append(len(texts))
                texts.append(line)
    vectors = unit(embedder.embed(texts))
    fake = Settings(data_dir=Path(tempfile.mkdtemp(prefix="lines-")), embedder="fake")
    with Memory.open(fake) as memory:
        memory.ingest(s.incidents)
        asked = [distill_alert(alert_of(q.query, memory)[0].text) for q in f.queries]
    alerts = unit(embedder.embed(asked))
    best = {id(q): alerts[k] for k, q in enumerate(f.queries)}

    def values(q: QueryFeatures) -> np.ndarray:
        a = best[id(q)]
        return _compared(
            np.array([float((vectors[of[c]] @ a).max()) if c in of else 0.0 for c in q.ids[: len(q.evidence)]]), q
        )

    return values


def density(form: str) -> Callable[[G.SetFeatures], Values]:
    def values(f: G.SetFeatures) -> Values:
        top = shipped_scale(f)[1]
        print(f"{f.name:12} neighbours {top:.3f}")
        read = {"constant": lambda m: np.full(len(m), top), "product": lambda m: m * top, "ratio": lambda m: m / top}
        return lambda q: _compared(read[form](_meaning(q)), q)

    return values


def words(column: str, times_density: bool) -> Callable[[G.SetFeatures], Values]:
    def values(f: G.SetFeatures) -> Values:
        weight = shipped_scale(f)[1] if times_density else 1.0
        return lambda q: np.nan_to_num(q.x[:, C[column]].astype(float)) * weight

    return values


def symptoms(f: G.SetFeatures) -> Values:
    """A shared symptom weighed by how few of the lookup's candidates also tell of one: in a memory where a
    symptom marks a family it singles the family out; where sibling pages all tell of it, it says little."""

    def values(q: QueryFeatures) -> np.ndarray:
        told = np.nan_to_num(q.x[:, C["symptom"]].astype(float)) > 0
        return told * (1.0 - told.mean())

    return values


def _sample(s: EvalSet) -> list:
    return sorted(s.incidents, key=lambda i: hashlib.sha256(i.id.encode()).hexdigest())


MEASURED = {"titles": titles, "other-problem": other_problem, "hub": hub, "lines": lines}  # read the memory's own text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scheme", choices=(*MEASURED, "density", "words", "symptoms"))
    ap.add_argument("--nearest", type=int, help="other-problem: entries left out (3); hub: probes averaged (10)")
    ap.add_argument("--beside", action="store_true", help="titles, other-problem, hub: beside the shipped standing")
    ap.add_argument("--form", choices=("constant", "product", "ratio"), default="constant", help="density")
    ap.add_argument("--column", choices=("idf", "idf_known", "bm25", "rarity"), default="idf", help="words")
    ap.add_argument("--times-density", action="store_true", help="words: times the memory's density")
    ap.add_argument("--in-place", action="store_true", help="symptoms: in place of the shared symptom, not beside it")
    args = ap.parse_args()
    sets, _ = every_set()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="anchors-")), embedder="local")
    features = [extract(s, settings) for s in sets]
    beside = args.beside or args.scheme not in MEASURED
    if args.scheme in MEASURED:
        embedder = make_embedder(settings)
        nearest = args.nearest or (10 if args.scheme == "hub" else 3)
        schemes = [MEASURED[args.scheme](s, f, embedder, nearest) for s, f in zip(sets, features)]
    else:
        per_set = (
            density(args.form)
            if args.scheme == "density"
            else symptoms
            if args.scheme == "symptoms"
            else words(args.column, args.times_density)
        )
        schemes = [per_set(f) for f in features]
    slot = SYMPTOM if args.scheme == "symptoms" and args.in_place else SPARE if beside else STANDING
    beside = beside and slot == SPARE
    for f, values in zip(features, schemes):
        for q in f.queries:
            if len(q.evidence):
                q.evidence[:, slot] = values(q)
    if beside:
        G.USED[:] = [FEATURES.index(x) for x in (*G.CONFIDENCE, "title")]
        G.SAME_USED[:] = [FEATURES.index(x) for x in (*G.SAME_PROBLEM, "title")]
    G.use_styles(features)
    G.style_table(features, G.DEFAULT.loso(features))


if __name__ == "__main__":
    main()
