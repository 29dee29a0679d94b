"""Look up: embed the alert like an incident, search by meaning and words, rank by facts, explain.

Two steps, so a long-lived memory can hold its store lock for the second only: `make_query` does the
cleaning and the embedding call (no store), `Retriever.search` does the store calls and the ranking.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel

from . import confidence, ranking
from . import payload as P
from .alert import Alert, Filters
from .conditions import holds
from .confidence import DEFAULT, Level, Thresholds
from .distill import distill_alert
from .embedders import Embedder
from .errors import EmbeddingFailed, InvalidInput
from .feedback import Tally
from .lexical import Rarity, Sparse, sparse_vector
from .ranking import Neighbour
from .settings import RankingWeights
from .signature import canonical_signature
from .stores import Hit, IncidentStore, Mode, QueryPlan
from .vocabulary import symptoms, terms
from .wording import Wording

log = logging.getLogger(__name__)

MAX_LIMIT = 100


class Lookup(BaseModel):
    """The answer to one alert: neighbours best first, and how they were found."""

    mode: Literal["hybrid", "dense", "lexical"]
    ranked: bool
    confidence: Level = "low"  # as sure as the best neighbour; low: nothing close is on record
    degraded: str | None = None  # set when the lookup fell back, and why
    signature_key: str | None
    neighbours: list[Neighbour]


@dataclass(frozen=True)
class Query:
    """An alert made ready to search: cleaned text, its two vectors, and how the search will run."""

    alert: Alert
    symptoms: list[str]  # canonical symptoms the alert tells of (ops vocabulary)
    wording: Wording  # the title, rare tokens and words ranking looks for in each candidate
    sparse: Sparse
    dense: list[float] | None
    mode: Mode
    degraded: str | None
    signature_key: str | None


def check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")


def make_query(alert: Alert, embedder: Embedder, mode: Mode) -> Query:
    """Clean and embed the alert. If the embedder fails, a hybrid lookup degrades to words only and says
    so; a dense-only lookup raises `EmbeddingFailed`."""
    text = distill_alert(alert.text)
    dense, degraded = None, None
    if mode in ("hybrid", "dense"):
        try:
            dense = embedder.embed([text])[0]
        except EmbeddingFailed as exc:
            if mode == "dense":
                raise
            degraded = f"embedder unreachable ({exc}); showing word matches only"
            log.warning(degraded)
            mode = "lexical"
    signature_key = canonical_signature(alert.signature or alert.text, [alert.env])
    told = symptoms(f"{alert.text}\n{text}")  # the raw text too: a rule's name before it became words
    sparse = sparse_vector(text, terms(told))
    return Query(alert, told, Wording.of(text), sparse, dense, mode, degraded, signature_key)


class Retriever:
    def __init__(
        self, store: IncidentStore, *, weights: RankingWeights, candidates: int = 50, thresholds: Thresholds = DEFAULT
    ):
        self._store = store
        self._weights = weights
        self._candidates = candidates
        self._thresholds = thresholds

    def search(
        self,
        query: Query,
        *,
        filters: Filters | None = None,
        limit: int = 5,
        rank: bool = True,
        now: datetime | None = None,
        feedback: Mapping[str, Tally] | None = None,
    ) -> Lookup:
        """The `limit` past incidents most like the query's alert, under `filters`.

        With `rank`, candidates are re-ordered by their boosts and exact signature matches are pinned first.
        """
        check_limit(limit)
        now = now or datetime.now(timezone.utc)
        filters = filters or Filters()
        where = filters.conditions()
        mode, dense, key = query.mode, query.dense, query.signature_key
        # Ranked hybrid needs each candidate's similarity, not its fused rank: the engine rescores.
        plan = QueryPlan.of(dense, query.sparse, mode, rescore=rank)
        hits = self._store.query(
            plan,
            dense=dense,
            sparse=query.sparse,
            where=where,
            limit=max(limit, self._candidates) if rank else limit,
            fields=P.RANKING_FIELDS,
        )
        if plan.rescore:  # the word overlap is read; points stored before payloads carried their terms
            if unworded := [h.point_id for h in hits if P.TERMS not in h.payload]:
                words = self._store.words_of(unworded)
                hits = [h._replace(terms=words[h.point_id]) if h.point_id in words else h for h in hits]
        # A rescored or dense-only search already scored its hits by meaning; nothing else did.
        by_meaning = plan.rescore or (plan.dense and not plan.sparse)
        cosines = {h.point_id: h.score for h in hits} if by_meaning else {}
        if rank and self._weights.signature_pin and key:
            seen = {h.point_id for h in hits}
            hits += [
                h for h in self._store.signature_matches(key) if h.point_id not in seen and holds(where, h.payload)
            ]
        if dense is not None:
            missing = [h.point_id for h in hits if h.point_id not in cosines]  # pinned matches; unranked fusion
            cosines.update(self._store.similarities(dense, missing))

        top_lexical = max((h.score for h in hits), default=1.0) or 1.0
        query_terms = frozenset(query.sparse.indices)
        rarity = Rarity(query_terms, (h.terms for h in hits)) if plan.rescore and self._weights.word_rarity else None
        candidates, evidence = [], {}
        for h in hits:
            similarity = cosines.get(h.point_id)
            # The plain share of the alert's words this hit holds: confidence reads it, ranking may weigh it.
            overlap = len(query_terms & h.terms) / len(query_terms) if query_terms else 0.0
            relevance = self._relevance(h, plan, mode, similarity, overlap, top_lexical, rarity)
            candidates.append(ranking.Candidate(h.point_id, h.payload, relevance, similarity, h.terms or None))
            evidence[h.point_id] = self._evidence(similarity, overlap)
        shown = ranking.rank(
            candidates,
            facts=query.alert,
            weights=self._weights,
            signature_key=key,
            now=now,
            by_facts=rank,
            symptoms=query.symptoms,
            feedback=feedback,
            wording=query.wording,
            shown=limit,
            rarity=rarity.weight if rarity else None,
        )
        full = self._store.retrieve([r.candidate.key for r in shown])
        # The boosts were computed from the ranking fields, which hold everything they read.
        neighbours = [
            ranking.neighbour(
                full.get(r.candidate.key, r.candidate.payload),
                boosts=r.boosts,
                score=r.score,
                relevance=r.candidate.relevance,
                similarity=r.candidate.similarity,
                now=now,
                evidence=evidence[r.candidate.key],
                confidence=confidence.level(
                    evidence[r.candidate.key],
                    pinned=r.pinned or ranking.is_signature_match(r.candidate.payload, key),
                    same_symptom=bool(ranking.shared_symptoms(r.candidate.payload, query.symptoms)),
                    meaning=dense is not None,
                    t=self._thresholds,
                ),
            )
            for r in shown
        ]
        return Lookup(
            mode=mode,
            ranked=rank,
            degraded=query.degraded,
            signature_key=key,
            neighbours=neighbours,
            confidence=confidence.overall([n.confidence for n in neighbours]),
        )

    def _evidence(self, similarity: float | None, overlap: float) -> float:
        """What says the problem is the same, on one scale in every mode: meaning and the plain share of the
        alert's words, or the words alone when meaning was not compared. The plain share, not the rarity-
        weighted one ranking uses: rarity is relative to what else the lookup found, and confidence must
        not rise because the other candidates were poorer (its thresholds were calibrated on this)."""
        return overlap if similarity is None else ranking.relevance(similarity, overlap, self._weights)

    def _relevance(
        self,
        h: Hit,
        plan: QueryPlan,
        mode: Mode,
        similarity: float | None,
        overlap: float,
        top_lexical: float,
        rarity: Rarity | None,
    ) -> float:
        if mode == "lexical":
            return h.score / top_lexical  # IDF scores are unbounded: scale the best to 1
        if similarity is not None and plan.rescore:
            # Ranking needs an absolute relevance: fused ranks turn a tie in meaning into a gap of 1/3.
            if rarity is not None:
                overlap = rarity.share(h.terms)
            return ranking.relevance(similarity, overlap, self._weights)
        if similarity is not None and mode == "dense":
            return similarity
        return h.score  # unranked hybrid keeps the fused order
