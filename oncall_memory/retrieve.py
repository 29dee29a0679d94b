"""Look up: embed the alert like an incident, search by meaning and words, rank by facts, explain."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel

from . import payload as P
from .alert import Alert, Filters
from .distill import distill_alert
from .embedders import Embedder
from .errors import EmbeddingFailed, InvalidInput
from .lexical import sparse_vector
from .ranking import Neighbour, explain, is_signature_match, score
from .settings import RankingWeights
from .signature import canonical_signature
from .store import Hit, IncidentStore, Mode

log = logging.getLogger(__name__)

MAX_LIMIT = 100


class Lookup(BaseModel):
    """The answer to one alert: neighbours best first, and how they were found."""

    mode: Literal["hybrid", "dense", "lexical"]
    ranked: bool
    degraded: str | None = None  # set when the lookup fell back, and why
    signature_key: str | None
    neighbours: list[Neighbour]


class Retriever:
    def __init__(self, store: IncidentStore, embedder: Embedder, *, weights: RankingWeights, candidates: int = 50):
        self._store = store
        self._embedder = embedder
        self._weights = weights
        self._candidates = candidates
        store.check_contract(embedder.model, embedder.dimension)

    def similar(
        self,
        alert: Alert,
        *,
        filters: Filters | None = None,
        limit: int = 5,
        mode: Mode = "hybrid",
        rank: bool = True,
        now: datetime | None = None,
    ) -> Lookup:
        """The `limit` past incidents most like `alert`, under `filters`.

        With `rank`, candidates are re-ordered by shared facts and exact signature matches are pinned
        first. If the embedder fails, a hybrid lookup degrades to words only and says so.
        Raises `InvalidInput` for a limit outside 1..100.
        """
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
        now = now or datetime.now(timezone.utc)
        text = distill_alert(alert.text)
        filters = filters or Filters()
        where = filters.to_qdrant()
        sparse = sparse_vector(text)

        dense: list[float] | None = None
        degraded = None
        if mode in ("hybrid", "dense"):
            try:
                dense = self._embedder.embed([text])[0]
            except EmbeddingFailed as exc:
                if mode == "dense":
                    raise
                degraded = f"embedder unreachable ({exc}); showing word matches only"
                log.warning(degraded)
                mode = "lexical"

        fetch = max(limit, self._candidates) if rank else limit
        # Ranked hybrid needs each candidate's similarity, not its fused rank: the engine rescores.
        rescore = rank and mode == "hybrid" and dense is not None
        hits = self._store.query(dense=dense, sparse=sparse, where=where, limit=fetch, mode=mode,
                                 fields=P.RANKING_FIELDS, rescore=rescore)
        # A rescored or dense search already scored its hits by meaning; nothing else did.
        cosines = {h.point_id: h.score for h in hits} if rescore or mode == "dense" else {}
        signature_key = canonical_signature(alert.signature or alert.text, [alert.env])
        pin = rank and self._weights.signature_pin
        if pin and signature_key:
            hits = self._with_signature_matches(hits, signature_key, filters)
        if dense is not None:
            missing = [h.point_id for h in hits if h.point_id not in cosines]  # pinned matches; unranked fusion
            cosines.update(self._store.similarities(dense, missing) if missing else {})

        top_lexical = max((h.score for h in hits), default=1.0) or 1.0
        query_terms = frozenset(sparse.indices)
        share = self._weights.lexical_share
        weights = self._weights if rank else None
        scored = []
        for hit in hits:
            similarity = cosines.get(hit.point_id)
            if mode == "lexical":
                relevance = hit.score / top_lexical  # IDF scores are unbounded: scale the best to 1
            elif similarity is not None and rescore:
                # Ranking needs an absolute relevance: fused ranks turn a tie in meaning into a gap of 1/3.
                overlap = len(query_terms & hit.terms) / len(query_terms) if query_terms else 0.0
                relevance = (1 - share) * similarity + share * overlap
            elif similarity is not None and mode == "dense":
                relevance = similarity
            else:
                relevance = hit.score  # unranked hybrid keeps the fused order
            total = score(hit.payload, relevance=relevance, alert=alert, weights=weights, now=now)
            pinned = pin and is_signature_match(hit.payload, signature_key)
            scored.append((not pinned, -total, hit, relevance, similarity, total))
        scored.sort(key=lambda row: row[:2])  # pinned first, then by score; stable among equals
        shown = scored[:limit]
        full = self._store.payloads([row[2].point_id for row in shown])
        neighbours = [
            explain(full.get(hit.point_id, hit.payload), score=total, relevance=relevance, similarity=similarity,
                    alert=alert, signature_key=signature_key, now=now)
            for _, _, hit, relevance, similarity, total in shown
        ]
        return Lookup(
            mode=mode, ranked=rank, degraded=degraded, signature_key=signature_key, neighbours=neighbours
        )

    def _with_signature_matches(self, hits: list[Hit], key: str, filters: Filters) -> list[Hit]:
        """Add exact signature matches the search missed: they go first whatever their distance."""
        seen = {h.point_id for h in hits}
        extra = [
            h for h in self._store.signature_matches(key) if h.point_id not in seen and filters.matches(h.payload)
        ]
        return hits + extra
