"""Okapi BM25 over a fixed set of texts: the textbook word search the evals hold the memory against.

Lookups never use it (the engine's sparse search answers them, IDF applied at query time); it is here so
`oncall-memory eval` and `bench.quality.github_issues` put the same baseline beside every configuration. It reads
the memory's own words (`lexical.terms`), so it differs from the memory's word search only in how it scores
(term-frequency saturation, length normalisation) and in knowing no ops vocabulary. Text only: an alert's
facts (service, env, labels) are beyond it, which is part of what the comparison measures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from ..domain.lexical import idf, terms


class BM25:
    """Okapi BM25 (k1 1.2, b 0.75, Lucene's non-negative IDF) over `docs`: key -> text."""

    def __init__(self, docs: Mapping[str, str], *, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.tf = {key: Counter(terms(text)) for key, text in docs.items()}
        self.length = {key: sum(tf.values()) for key, tf in self.tf.items()}
        self.average = (sum(self.length.values()) / len(self.length)) if self.length else 0.0
        df = Counter(word for tf in self.tf.values() for word in tf)
        n = len(self.tf)
        self.idf = {word: idf(n, d) for word, d in df.items()}

    def scores(self, text: str, *, without: Iterable[str] = ()) -> dict[str, float]:
        """Each text's score for `text`'s words (texts that share no word are left out); `without`: keys
        left out (the query's own text, looked up among the others)."""
        words = set(terms(text))
        skip = set(without)
        scores = {}
        for key, tf in self.tf.items():
            if key in skip or not (shared := words & tf.keys()):
                continue
            norm = self.k1 * (1 - self.b + self.b * self.length[key] / self.average)
            scores[key] = sum(self.idf[w] * tf[w] * (self.k1 + 1) / (tf[w] + norm) for w in shared)
        return scores

    def ranked(self, text: str, *, limit: int, without: Iterable[str] = ()) -> list[str]:
        """The keys of the `limit` texts that score highest for `text`'s words (none that share no word),
        best first, ties by key."""
        scores = self.scores(text, without=without)
        return sorted(scores, key=lambda k: (-scores[k], k))[:limit]
