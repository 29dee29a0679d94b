"""Look up: embed the alert like an incident, search by meaning and words, rank by facts, explain.

Two steps, so a long-lived memory can hold its store lock for the second only: `make_query` does the
cleaning and the embedding call (no store), `Retriever.search` does the store calls and the ranking.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal, Protocol

from pydantic import BaseModel

from ..domain import payload as P
from ..domain.alert import Alert, Filters
from ..domain.conditions import holds
from ..domain.distill import distill_alert
from ..domain.lexical import Rarity, Sparse, sparse_vector, term_index
from ..domain.lexical import terms as lexical_terms
from ..domain.signature import canonical_signature
from ..domain.vocabulary import symptoms, terms
from ..embedders import Embedder
from ..errors import EmbeddingFailed, InvalidInput
from ..settings import RankingWeights
from ..store.engines import Hit, IncidentStore, Mode, QueryPlan
from . import confidence, ranking
from .confidence import DEFAULT, Calibration, Evidence, Level
from .feedback import Tally
from .ranking import Neighbour
from .scale import UNMEASURED, Scale, ScaleSource
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
    metric_terms: frozenset[int] = frozenset()  # the rule's metrics the alert's own text does not name
    metric_words: tuple[tuple[str, frozenset[int]], ...] = ()  # each metric the rule watches, and its word ids

    def metrics_named(self, held: frozenset[int] | None) -> list[str]:
        """The metrics the alert's rule watches that an incident holding the words `held` names."""
        return metrics_named(self.metric_words, held)


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
    # The metrics its rule watches are searched as its words: a runbook or post-mortem that names the metric
    # is found by it (`promql`).
    sparse = sparse_vector(text, terms(told))
    metrics = lexical_terms(" ".join(alert.metrics))
    metric_terms = frozenset(term_index(m) for m in metrics) - frozenset(sparse.indices)
    if metrics:
        sparse = sparse_vector(text, [*terms(told), *metrics])
    words = metric_words(alert.metrics)
    return Query(alert, told, Wording.of(text), sparse, dense, mode, degraded, signature_key, metric_terms, words)


def metric_words(metrics: list[str]) -> tuple[tuple[str, frozenset[int]], ...]:
    """Each metric, and the word ids an incident's text holds when it names it (a recording rule's name,
    split at its colons, is several)."""
    return tuple((m, ids) for m in metrics if (ids := frozenset(term_index(t) for t in lexical_terms(m))))


def metrics_named(metrics: tuple[tuple[str, frozenset[int]], ...], held: frozenset[int] | None) -> list[str]:
    """Those of `metrics` (`metric_words`) an incident holding the words `held` names."""
    return [name for name, words in metrics if held is not None and words <= held]


class CalibrationSource(Protocol):
    """Where the calibration of the moment comes from: the shipped one, or a team's refit of it."""

    @property
    def current(self) -> Calibration: ...


class Retriever:
    def __init__(
        self,
        store: IncidentStore,
        weights: RankingWeights,
        candidates: int = 50,
        calibration: CalibrationSource = DEFAULT,
        scale: ScaleSource = UNMEASURED,
    ):
        self._store = store
        self._scale = scale
        self._weights = weights
        self._candidates = candidates
        self._calibration = calibration

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
        many = max(limit, self._candidates) if rank else limit
        # The word search's own scores (IDF over the whole memory) for the words part of relevance, read from
        # its first candidates; an incident it did not rank among them shares little.
        searched: dict[str, float] = {}
        if plan.rescore and self._weights.words == "search":
            assert dense is not None  # a rescored plan has both searches
            hits, by_words = self._store.hybrid(
                dense=dense, sparse=query.sparse, where=where, limit=many, fields=P.RANKING_FIELDS
            )
            searched = _over_best(by_words[: self._candidates])
        else:
            # An unranked lookup shows every hit it reads: each is read whole, once, not its ranking fields
            # and then again to be shown (0.36 ms of a 2.9 ms dense lookup at 100,000).
            fields = P.RANKING_FIELDS if rank else None
            hits = self._store.query(plan, dense=dense, sparse=query.sparse, where=where, limit=many, fields=fields)
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
        # Confidence reads the words the alert says itself: an entry that does not name the rule's metric is
        # no less likely for it (runbooks seldom do), and one that does is found by the search.
        own_words = query_terms - query.metric_terms
        weights = self._weights
        rarity = Rarity(query_terms, (h.terms for h in hits)) if plan.rescore and weights.words == "rarity" else None
        candidates, overlaps = [], {}
        for h in hits:
            similarity = cosines.get(h.point_id)
            # The plain share of the alert's words this hit holds: confidence reads it, ranking may weigh it.
            overlap = len(own_words & h.terms) / len(own_words) if own_words else 0.0
            word_part = rarity.share(h.terms) if rarity else searched.get(h.point_id, 0.0) if searched else overlap
            relevance = self._relevance(h, plan, mode, similarity, word_part, top_lexical)
            candidates.append(ranking.Candidate(h.point_id, h.payload, relevance, similarity, h.terms or None))
            overlaps[h.point_id] = overlap
        if rank and query.symptoms and self._scale.current.symptoms.reach:
            candidates = self._told_by_meaning(candidates, query.symptoms)
        shown = ranking.rank(
            candidates,
            facts=query.alert,
            weights=weights,
            signature_key=key,
            now=now,
            by_facts=rank,
            symptoms=query.symptoms,
            feedback=feedback,
            wording=query.wording,
            shown=limit,
            rarity=rarity.weight if rarity else None,
        )
        full = self._store.retrieve([r.candidate.key for r in shown]) if rank else {}
        meanings = sorted((c.similarity for c in candidates if c.similarity is not None), reverse=True)
        own_on_record = ranking.recurrence_on_record(candidates, query.alert, query.symptoms)
        neighbours = []
        scale = self._scale.current
        calibration = self._calibration.current  # once per lookup: a team's is rebuilt at each read
        for place, r in enumerate(shown):
            c = r.candidate
            said = evidence(c, r.boosts, query.alert, overlaps[c.key], meanings, scale, own_words)
            named = query.metrics_named(c.terms)
            boosts = [*r.boosts, ranking.Boost(ranking.METRIC, 0.0, named)] if named else r.boosts
            sure = calibration.probability(said)
            neighbours.append(
                # The boosts were computed from the ranking fields, which hold everything they read.
                ranking.neighbour(
                    full.get(c.key, c.payload),
                    boosts=boosts,
                    score=r.score,
                    relevance=c.relevance,
                    similarity=c.similarity,
                    now=now,
                    evidence=said,
                    probability=sure if dense is not None else None,
                    confidence=calibration.level(
                        said,
                        pinned=r.pinned or ranking.is_signature_match(c.payload, key),
                        meaning=dense is not None,
                        own_on_record=own_on_record,
                        ranked_below=place > 0,
                        names_metric=bool(named),
                    ),
                )
            )
        return Lookup(
            mode=mode,
            ranked=rank,
            degraded=query.degraded,
            signature_key=key,
            neighbours=neighbours,
            confidence=confidence.overall([n.confidence for n in neighbours]),
        )

    def _told_by_meaning(self, candidates: list[ranking.Candidate], symptoms: Sequence[str]) -> list[ranking.Candidate]:
        """The candidates, each that tells of one of the alert's symptoms by its meaning (`told.py`) holding it
        as if its words told of it: nearest that symptom of all, and within its reach. One engine call a
        symptom measured here, over the candidates whose words do not tell of the alert's."""
        told = self._scale.current.symptoms
        mine = [k for k in symptoms if k in told.reach]
        lacking = [c.key for c in candidates if not set(mine) <= set(c.payload.get(P.SYMPTOMS) or ())]
        if not mine or not lacking:
            return candidates
        near = {k: self._store.similarities(told.centroids[k].tolist(), lacking) for k in told.reach}
        adds: dict[str, list[str]] = {}
        for point in lacking:
            cosines = {k: near[k].get(point, -1.0) for k in near}
            nearest = max(cosines, key=cosines.__getitem__)
            if nearest in mine and cosines[nearest] >= told.reach[nearest]:
                adds[point] = [nearest]
        return [
            c._replace(payload={**c.payload, P.SYMPTOMS: [*(c.payload.get(P.SYMPTOMS) or ()), *adds[c.key]]})
            if c.key in adds
            else c
            for c in candidates
        ]

    def _relevance(
        self,
        h: Hit,
        plan: QueryPlan,
        mode: Mode,
        similarity: float | None,
        words: float,
        top_lexical: float,
    ) -> float:
        if mode == "lexical":
            return h.score / top_lexical  # IDF scores are unbounded: scale the best to 1
        if similarity is not None and plan.rescore:
            # Ranking needs an absolute relevance: fused ranks turn a tie in meaning into a gap of 1/3.
            return ranking.relevance(similarity, words, self._weights)
        if similarity is not None and mode == "dense":
            return similarity
        return h.score  # unranked hybrid keeps the fused order


def evidence(
    c: ranking.Candidate,
    boosts: list[ranking.Boost],
    facts: Alert,
    overlap: float,
    meanings: list[float],
    scale: Scale = UNMEASURED,
    alert_words: frozenset[int] = frozenset(),
) -> Evidence:
    """What says this candidate is the same problem (see `confidence.Evidence`). `meanings`: every
    candidate's similarity, best first, to read how far this one stands above the rest and above the
    lookup's background (their median); `scale`: the memory's own, to read where it stands on it and how
    rare the alert's words (`alert_words`, term ids) it holds are here."""
    kinds = {b.kind for b in boosts}
    similarity = c.similarity or 0.0
    # The best of the others: the runner-up for the best candidate, the best for every other one.
    if not meanings or c.similarity is None:
        standout = 0.0
    elif c.similarity >= meanings[0]:
        standout = c.similarity - meanings[1] if len(meanings) > 1 else 0.0
    else:
        standout = c.similarity - meanings[0]

    def where(kind: str, mine: str | None, field: str) -> float:
        if kind in kinds:
            return 1.0
        theirs = c.payload.get(field)
        return -1.0 if mine and theirs and mine.lower() != str(theirs).lower() else 0.0

    return Evidence(
        meaning=similarity,
        standout=standout,
        words=overlap,
        symptom=float(ranking.SYMPTOM in kinds),
        title=float(ranking.TITLE in kinds),
        service=where(ranking.SERVICE, facts.service, P.SERVICE),
        env=where(ranking.ENV, facts.env, P.ENV),
        above=similarity - meanings[len(meanings) // 2] if meanings and c.similarity is not None else 0.0,
        standing=scale.standing(similarity) if c.similarity is not None else 0.0,
        # Its words as the search read them (a hit's are its payload's `terms`; None when it has none).
        rare_words=scale.rare_share(alert_words, c.terms or ()) * scale.neighbours,
    )


def _over_best(hits: list[Hit]) -> dict[str, float]:
    """The word search's scores over the best of them (0..1)."""
    top = max((h.score for h in hits), default=0.0)
    return {h.point_id: h.score / top for h in hits} if top > 0 else {}
