"""Long entries in sections (issue 50, item 5), screened on meaning alone and not kept (docs/evaluation.md).

    python -m bench.quality.sections [--words 120] [--stride 90]

An entry longer than the model reads (all-MiniLM-L6-v2 stops at 256 word pieces) is embedded from its
opening only. Here each such entry is also cut into sections: its first line (the title, for context) and a
window of `--words` words of the rest, every `--stride` words. Each alert of each set is then scored against
every entry three ways, meaning alone (the dense MRR of the right answer, strict):

  - whole: the entry's one vector, as stored now;
  - best of: the best of that vector and its sections' (what a search over sections grouped by entry gives);
  - mean of: one vector, the mean of the entry's and its sections' (what storing a pooled vector gives).

Sets with no entry over the limit score the same three ways, so only theirs are printed with a difference.
Sectioning is worth building into the store only if it helps on both sets that have long entries.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Sequence

import numpy as np

from bench.quality.features import alert_of
from bench.quality.sets.load import every_set
from oncall_memory.domain.distill import distill, distill_alert
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.embedders.local import LocalEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.store.engines import open_store


def unit(vectors: object) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def sections(text: str, embedder: LocalEmbedder, words: int, stride: int) -> list[str]:
    """The sections of an entry the model cannot read whole; none for one it can."""
    if not embedder.truncate(text)[1]:
        return []
    title, _, rest = text.partition("\n")
    split = rest.split()
    return [
        title + "\n" + " ".join(split[at : at + words]) for at in range(0, max(1, len(split) - words + stride), stride)
    ]


def mrr(
    scores: np.ndarray, ids: list[str], right: Sequence[Collection[str]], own: Sequence[str | None] | None = None
) -> float:
    """The right entries' MRR, each alert's `own` entry (a leave-one-out question's) left out of its order."""
    ranks = []
    for n, (row, wanted) in enumerate(zip(scores, right)):
        mine = own[n] if own else None
        order = [ids[k] for k in np.argsort(-row, kind="stable") if ids[k] != mine]
        ranks.append(next(r for r, i in enumerate(order) if i in wanted) + 1)
    return float(np.mean([1 / r for r in ranks]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", type=int, default=120)
    parser.add_argument("--stride", type=int, default=90)
    args = parser.parse_args()
    embedder = LocalEmbedder()
    # The alerts are read as the bench reads them; the memory only lends its (empty) known facts.
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), Settings(data_dir=":memory:"))
    sets, missing = every_set()
    for line in missing:
        print(line)
    print(f"sections of {args.words} words every {args.stride}; dense MRR, strict")
    print(f"  {'set':12s} {'alerts':>6s} {'long':>5s} {'sections':>8s} {'whole':>7s} {'best of':>8s} {'mean of':>8s}")
    for s in sets:
        queries = [q for q in s.queries if q.strict]
        if not queries:
            continue  # leave-one-out sets (again, post-mortems) have no fixed right entry to score against
        ids = [i.id for i in s.incidents]
        texts = [distill(i) for i in s.incidents]
        whole = unit(embedder.embed(texts))
        cut = [sections(t, embedder, args.words, args.stride) for t in texts]
        owner = np.array([k for k, parts in enumerate(cut) for _ in parts], dtype=int)
        alerts = unit(embedder.embed([distill_alert(alert_of(q, memory)[0].text) for q in queries]))
        base = alerts @ whole.T
        best, pooled = base.copy(), whole.copy()
        if len(owner):
            parts = unit(embedder.embed([p for ps in cut for p in ps]))
            by_part = alerts @ parts.T
            for k in np.unique(owner):
                best[:, k] = np.maximum(base[:, k], by_part[:, owner == k].max(axis=1))
                pooled[k] = unit(np.vstack([whole[k], parts[owner == k]]).mean(axis=0))
        right = [q.strict for q in queries]
        row = [mrr(base, ids, right), mrr(best, ids, right), mrr(alerts @ pooled.T, ids, right)]
        long = sum(1 for parts in cut if parts)
        print(f"  {s.name:12s} {len(queries):6d} {long:5d} {len(owner):8d} " + " ".join(f"{x:7.3f} " for x in row))


if __name__ == "__main__":
    main()
