"""Lexical side of hybrid search: distilled text to a sparse vector of term counts.

Qdrant applies IDF itself (sparse vector with `Modifier.IDF`), so the index stays in step with the
collection without a second store. Terms are hashed to stable 31-bit indices: no vocabulary to keep.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Split on anything but letters, digits and the dash/underscore that hold error codes together.
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_]*(?:-[a-z0-9_]+)*")
_STOP = frozenset(
    "a an and are as at be been but by for from has have in into is it its no not of on or so that the their "
    "then there this to was were will with after before during while when which who did does do".split()
)


def terms(text: str) -> list[str]:
    """The terms of `text`: lowercased words, hyphenated words also split into their parts."""
    out: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        parts = token.split("-")
        for term in [token, *parts] if len(parts) > 1 else [token]:
            if len(term) > 1 and term not in _STOP:
                out.append(term)
    return out


@dataclass(frozen=True)
class Sparse:
    """A sparse vector: term indices (ascending) and their weights."""

    indices: list[int]
    values: list[float]


def term_index(term: str) -> int:
    """A term's index in the sparse vector (stable: no vocabulary to keep)."""
    return zlib.crc32(term.encode("utf-8")) & 0x7FFFFFFF


def sparse_vector(text: str, extra: Sequence[str] = ()) -> Sparse:
    """Term-frequency sparse vector (1 + log tf) for `text` and the `extra` terms taken as they are (the
    ops vocabulary's canonical symptoms); IDF is applied by Qdrant at query time."""
    counts: Counter[int] = Counter(term_index(t) for t in [*terms(text), *extra])
    indices = sorted(counts)
    return Sparse(indices=indices, values=[1.0 + math.log(counts[i]) for i in indices])


def idf(n: int, df: int) -> float:
    """BM25's inverse document frequency of a word `df` of `n` texts hold (Lucene's form: never negative)."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


class Rarity:
    """How much each of the alert's words says, among the candidates a lookup found: BM25's inverse
    document frequency over them. A word every lookalike holds ("etcd", "kubelet") tells them apart no
    better than chance; the one few hold (`quota-backend-bytes`, "busybox") is the evidence that picks the
    same problem out of its siblings. Counted among the candidates, not the collection: it is what
    separates these lookalikes that matters, and it needs no statistics kept beside the engine's."""

    def __init__(self, query: frozenset[int], found: Iterable[frozenset[int]]):
        self.query = query
        docs = [d & query for d in found]
        n = len(docs)
        df = Counter(t for d in docs for t in d)
        self.weight = {t: idf(n, df[t]) for t in query}
        self.total = sum(self.weight.values())

    def share(self, held: frozenset[int]) -> float:
        """The weighted share of the alert's words `held` holds, on 0..1 (every word of the alert counts in
        the whole, held by a candidate or not, as the plain share does)."""
        if not self.total:
            return 0.0
        return sum(self.weight[t] for t in self.query & held) / self.total
