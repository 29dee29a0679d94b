"""Rank candidates by the facts in their payload, and say why, in words a tired human reads at 3 a.m.

Meaning gets a candidate into the list; facts order it. Each fact that moves a candidate is a typed
`Boost` (kind, weight, text): the score is relevance plus the weights, the reasons are the texts, so
the order and its explanation cannot drift apart. Kinds with weight 0 only explain.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from ..domain import payload as P
from ..domain.facts import Facts
from ..domain.vocabulary import BY_KEY
from ..settings import RankingWeights
from .confidence import Evidence, Level
from .feedback import Tally
from .fixes import stories
from .wording import Wording

# Boost kinds, in the order their reasons are read.
SIGNATURE, TITLE, MEANING, RARE, WORDS, SYMPTOM, FLAVOR, ENV, SERVICE, TAGS, FIXED, NO_EFFECT, WORSE, CHANGED, AGE = (
    "signature",
    "title",
    "meaning",
    "rare",
    "words",
    "symptom",
    "flavor",
    "env",
    "service",
    "tags",
    "fixed",
    "no_effect",
    "worse",
    "changed",
    "age",
)
HELPED, NOT_RELATED = "helped", "not_related"
METRIC = "metric"  # it names a metric the alert's rule watches: explains, weighs nothing (`retrieve`)
FIX_KINDS = frozenset({FIXED, NO_EFFECT, WORSE, CHANGED})


class Boost(NamedTuple):  # a tuple: ranking makes one per fact per candidate
    kind: str
    weight: float  # added to relevance; 0 for what only explains
    detail: Any  # what the reason is made of; its words are built only for the neighbours shown

    @property
    def text(self) -> str:
        return _WORDS[self.kind](self.detail)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _same(kind: str) -> Callable[[tuple[str, str | None]], str]:
    def words(detail: tuple[str, str | None]) -> str:
        value, source = detail
        return f"same {kind} ({value})" + (f", from the {source}" if source else "")

    return words


_WORDS = {
    SIGNATURE: lambda _: "exact signature match",
    TITLE: lambda _: "the same title",
    MEANING: lambda similarity: f"meaning {similarity:.2f} similar",
    RARE: lambda tokens: "both mention " + ", ".join(tokens),
    WORDS: lambda words: "words in common: " + ", ".join(words),
    SYMPTOM: lambda keys: "both are " + " and ".join(BY_KEY[k].plural for k in keys),
    FLAVOR: _same("flavor"),
    ENV: _same("env"),
    SERVICE: _same("service"),
    TAGS: lambda tags: f"{_plural(len(tags), 'shared component')}: {', '.join(tags)}",
    FIXED: lambda actions: "fixed by: " + "; ".join(actions),
    NO_EFFECT: lambda actions: "tried before without effect: " + "; ".join(actions),
    WORSE: lambda actions: "made it worse last time: " + "; ".join(actions),
    CHANGED: lambda stories: "; ".join(s.told() for s in stories),
    HELPED: lambda n: f"helped {_times(n)} on similar alerts",
    NOT_RELATED: lambda n: f"marked not related {_times(n)} for similar alerts",
    AGE: lambda days: human_age(days),
    METRIC: lambda names: "names the metric the alert's rule watches: " + ", ".join(names),
}


def weak_fix(boost: Boost) -> str:
    """A weak match's fix, said as what fixed that incident: never as a suggestion for this alert."""
    return "fixed that one (weak match, not a suggestion): " + "; ".join(boost.detail)


class FixView(BaseModel):
    action: str
    outcome: str  # the latest
    at: str | None = None
    history: str | None = None  # "no effect since 2026-05-20; worked until 2026-05-02"


class Neighbour(BaseModel):
    """A past incident near the alert, with what fixed it and why it ranked where it did."""

    id: str
    title: str
    score: float  # what the order is by: relevance plus fact boosts
    relevance: float  # the search's own score on a 0..1 scale (fused rank, cosine, or word match)
    similarity: float | None  # cosine similarity of meaning; None when the embedder was not used
    # How sure it is the same problem (see confidence.py): a low one is shown as a weak match, never as a fix.
    confidence: Level = "medium"
    age_days: float | None
    age: str | None
    fixes_worked: list[str]  # by each action's latest outcome
    fixes_failed: list[str]
    fixes: list[FixView] = []  # every action, most recent first, with its history when its outcome changed
    url: str | None
    resolution_minutes: float | None = None  # from opened to resolved, when both are known
    service: str | None = None
    env: str | None = None
    flavor: str | None = None
    component_tags: list[str] = []
    root_cause: str | None = None
    signature_match: bool = False
    reasons: list[str]
    # Each reason's kind (same order): a client of the API renders "why" as the memory does (fixes and age
    # on their own lines), without the typed boosts, which stay in the process.
    reason_kinds: list[str] = []
    boosts: list[Boost] = Field(default=[], exclude=True)  # the reasons, typed, for renderers
    # The probability that it is the same problem (confidence.py), when its meaning was compared.
    probability: float | None = None
    # What the confidence was read from (retrieve.evidence), for calibrating it and for a team's refit.
    evidence: Evidence | None = Field(default=None, exclude=True)

    def reasons_except(self, *kinds: str) -> list[str]:
        """The reasons, without those of these kinds (a renderer that shows fixes or age on its own line)."""
        if not self.boosts:  # read back from the API's JSON: its kinds, when the service sent them
            if len(self.reason_kinds) != len(self.reasons):
                return list(self.reasons)
            return [r for r, kind in zip(self.reasons, self.reason_kinds, strict=True) if kind not in kinds]
        weak = self.confidence == "low"
        return [weak_fix(b) if weak and b.kind == FIXED else b.text for b in self.boosts if b.kind not in kinds]


def human_age(days: float) -> str:
    """How long ago, as people say it: the one rule for every age shown (answers, the page, the incident
    page, the last ingest), so one incident is never "20 months" in a list and "1 year" on its page."""
    if days < 0:
        return "in the future"
    if days < 1:
        minutes = int(days * 24 * 60)
        if minutes < 60:
            return "just now" if minutes < 1 else f"{minutes} minute{'s' * (minutes != 1)} ago"
        hours = minutes // 60
        return f"{hours} hour{'s' * (hours != 1)} ago"
    for limit, unit, size in ((14, "day", 1), (60, "week", 7), (730, "month", 30.44), (float("inf"), "year", 365.25)):
        if days < limit:
            n = int(days // size)
            return f"{n} {unit}{'s' * (n != 1)} ago"
    raise AssertionError("unreachable")


def resolution_minutes(payload: dict[str, Any]) -> float | None:
    opened, resolved = payload.get(P.OPENED_AT), payload.get("resolved_at")
    if not opened or not resolved:
        return None
    return round((datetime.fromisoformat(resolved) - datetime.fromisoformat(opened)).total_seconds() / 60, 1)


def age_days(payload: dict[str, Any], now: datetime) -> float | None:
    stamp = payload.get(P.OPENED_AT) or payload.get("resolved_at")
    if not stamp:
        return None
    return max(0.0, (now - datetime.fromisoformat(stamp)).total_seconds() / 86400)


def relevance(similarity: float, words: float, weights: RankingWeights) -> float:
    """How near in meaning and in words, on 0..1: `lexical_share` of it is the words (`weights.words`
    says which measure of them)."""
    return (1 - weights.lexical_share) * similarity + weights.lexical_share * words


def shared_symptoms(payload: dict[str, Any], symptoms: Iterable[str]) -> list[str]:
    """The canonical symptoms both the alert and the incident tell of."""
    told = payload.get(P.SYMPTOMS) or ()
    return [k for k in symptoms if k in told]


def recurrence_on_record(candidates: Iterable[Candidate], facts: Facts, symptoms: Iterable[str]) -> bool:
    """Does an incident of the alert's own service tell of a symptom the alert tells of: the alert's
    recurrence is on record, and another service's incident of that symptom is not the same problem."""
    mine = (facts.service or "").lower()
    symptoms = tuple(symptoms)
    return bool(mine and symptoms) and any(
        str(c.payload.get(P.SERVICE) or "").lower() == mine and shared_symptoms(c.payload, symptoms) for c in candidates
    )


def is_signature_match(payload: dict[str, Any], signature_key: str | None) -> bool:
    return bool(signature_key) and payload.get(P.SIGNATURE_KEY) == signature_key


def boosts(
    payload: dict[str, Any],
    *,
    facts: Facts,
    weights: RankingWeights,
    similarity: float | None,
    signature_key: str | None,
    now: datetime,
    symptoms: Iterable[str] = (),
    tally: Tally | None = None,
    wording: Wording | None = None,
    term_ids: frozenset[int] | None = None,
    explain: bool = True,
    rarity: Mapping[int, float] | None = None,
    best_meaning: float | None = None,
    symptom_elsewhere: bool = False,
) -> list[Boost]:
    """Every fact that moves (or explains) this candidate, in reading order. `term_ids`: the candidate's
    words as the search read them (else from its payload's `terms`, else its text is tokenised). Without
    `explain`, only the facts that move it (what its score needs): the rest is read for the few shown.
    `rarity`: how the search weighed each of the alert's words (term id to weight), the rarest named first.
    `best_meaning`: the best similarity among the candidates; where it happened (flavor, env, service) weighs
    only for a candidate within `weights.facts_gate` of it or that tells of a symptom the alert tells of
    (it is still named either way). `symptom_elsewhere`: some candidate tells of one of the alert's symptoms
    (and `weights.facts_where` is "symptom"); then where it happened counts only for those that do."""
    out: list[Boost] = []
    wording = wording or Wording()
    if is_signature_match(payload, signature_key):
        out.append(Boost(SIGNATURE, 0.0, None))  # pinned first, not weighted
    if wording.same_title(payload.get("title")):
        out.append(Boost(TITLE, weights.same_title, None))
    if explain and similarity is not None:
        out.append(Boost(MEANING, 0.0, similarity))
    text = payload.get(P.TEXT)
    if term_ids is None and (ids := payload.get(P.TERMS)) is not None:
        term_ids = frozenset(ids)
    if rare := wording.rare_in(text, term_ids):
        out.append(Boost(RARE, weights.rare_token * min(len(rare), weights.max_rare_tokens), rare))
    if explain and (common := wording.common(text, term_ids=term_ids, rarity=rarity)):
        out.append(Boost(WORDS, 0.0, common))  # counted in relevance already; named here
    if both := shared_symptoms(payload, symptoms):
        out.append(Boost(SYMPTOM, weights.same_symptom * len(both), both))
    if both:
        near = True
    elif symptom_elsewhere:
        near = False  # another candidate tells of the alert's symptom: this one is not the same problem
    else:
        near = similarity is None or best_meaning is None or similarity >= best_meaning - weights.facts_gate
    for kind, field, mine, weight in (
        (FLAVOR, P.FLAVOR, facts.flavor, weights.same_flavor),
        (ENV, P.ENV, facts.env, weights.same_env),
        (SERVICE, P.SERVICE, facts.service, weights.same_service),
    ):
        theirs = payload.get(field)
        if mine and theirs and mine.lower() == theirs.lower():
            out.append(Boost(kind, weight if near else 0.0, (theirs, getattr(facts, "fact_sources", {}).get(field))))
    tags = payload.get(P.TAGS) or []
    shared = [t for t in facts.component_tags if t in tags]
    if shared:
        out.append(Boost(TAGS, weights.shared_tag * min(len(shared), weights.max_shared_tags), shared))
    # Each action counts by its latest outcome: a fix that stopped working is not a fix that works.
    latest = stories(payload.get("fixes_attempted") or [])
    fixed = [s.action for s in latest if s.worked]
    if fixed:
        out.append(Boost(FIXED, weights.worked_fix, fixed))
    for kind, outcome in ((NO_EFFECT, "no-op"), (WORSE, "worsened")) if explain else ():
        actions = [s.action for s in latest if s.outcome == outcome]
        if actions:
            out.append(Boost(kind, 0.0, actions))
    if explain and (changed := [s for s in latest if s.changed]):
        out.append(Boost(CHANGED, 0.0, changed))
    if tally and tally.helped:
        out.append(Boost(HELPED, weights.feedback_helped * min(tally.helped, weights.max_feedback), tally.helped))
    if tally and tally.not_related:
        out.append(
            Boost(
                NOT_RELATED,
                -weights.feedback_not_related * min(tally.not_related, weights.max_feedback),
                tally.not_related,
            )
        )
    days = age_days(payload, now)
    if days is not None:
        out.append(Boost(AGE, weights.recency * 0.5 ** (days / weights.recency_half_life_days), days))
    return out


class Candidate(NamedTuple):
    """A search hit before ranking: its payload (the ranking fields at least) and how near it is."""

    key: str
    payload: dict[str, Any]
    relevance: float
    similarity: float | None
    terms: frozenset[int] | None = None  # its term ids, as the search read them (None: not read)


class Ranked(NamedTuple):
    candidate: Candidate
    boosts: list[Boost]
    score: float  # relevance plus the boosts' weights (relevance alone when not ranked)
    pinned: bool


def rank(
    candidates: Iterable[Candidate],
    *,
    facts: Facts,
    weights: RankingWeights,
    signature_key: str | None,
    now: datetime,
    by_facts: bool = True,
    symptoms: Iterable[str] = (),
    feedback: Mapping[str, Tally] | None = None,
    wording: Wording | None = None,
    shown: int | None = None,
    rarity: Mapping[int, float] | None = None,
) -> list[Ranked]:
    """Candidates best first. With `by_facts`, the score is relevance plus every boost's weight and an exact
    signature match (when `weights.signature_pin`) goes first whatever its score; without, the search's
    own order by relevance stands. Equal scores go by id: the engine returns ties in an order of its own,
    which made the same lookup answer differently from run to run.

    With `shown`, only that many come back, and only they carry the facts that explain without moving
    (the words in common, fixes that did nothing): scoring 50 candidates needs only what moves them."""

    def why(c: Candidate, explain: bool) -> list[Boost]:
        return boosts(
            c.payload,
            facts=facts,
            weights=weights,
            similarity=c.similarity,
            signature_key=signature_key,
            now=now,
            symptoms=symptoms,
            tally=(feedback or {}).get(str(c.payload.get(P.INCIDENT_ID))),
            wording=wording,
            term_ids=c.terms,
            explain=explain,
            rarity=rarity,
            best_meaning=best,
            symptom_elsewhere=symptom_elsewhere,
        )

    candidates = list(candidates)
    symptoms = tuple(symptoms)
    best = max((c.similarity for c in candidates if c.similarity is not None), default=None)
    # Where it happened is evidence of a recurrence only beside evidence of the same problem: when some
    # candidate tells of the alert's symptom, a same-service incident that does not is another problem there.
    symptom_elsewhere = weights.facts_where == "symptom" and any(
        shared_symptoms(c.payload, symptoms) for c in candidates
    )
    pin = by_facts and weights.signature_pin
    explain = shown is None
    ranked = []
    for c in candidates:
        # Unranked, nothing moves a candidate: only the shown are explained, once (below).
        moved = why(c, explain) if by_facts or explain else []
        score = c.relevance + (sum(b.weight for b in moved) if by_facts else 0.0)
        ranked.append(Ranked(c, moved, score, pin and is_signature_match(c.payload, signature_key)))
    ranked.sort(key=lambda r: (not r.pinned, -r.score, r.candidate.key))
    if explain:
        return ranked
    return [r._replace(boosts=why(r.candidate, True)) for r in ranked[:shown]]


def neighbour(
    payload: dict[str, Any],
    *,
    boosts: list[Boost],
    score: float,
    relevance: float,
    similarity: float | None,
    now: datetime,
    confidence: Level = "medium",
    evidence: Evidence | None = None,
    probability: float | None = None,
) -> Neighbour:
    """The neighbour as the responder sees it. Run on the few shown, with their whole payload."""
    latest = stories(payload.get("fixes_attempted") or [])
    days = age_days(payload, now)
    return Neighbour(
        id=payload.get(P.INCIDENT_ID, "?"),
        title=payload.get("title", ""),
        score=round(score, 6),
        relevance=round(relevance, 6),
        similarity=None if similarity is None else round(similarity, 6),
        confidence=confidence,
        evidence=evidence,
        probability=None if probability is None else round(probability, 3),
        age_days=None if days is None else round(days, 2),
        age=None if days is None else human_age(days),
        fixes_worked=[s.action for s in latest if s.worked],
        fixes_failed=[s.action for s in latest if not s.worked],
        fixes=[
            FixView(action=s.action, outcome=s.outcome, at=s.at, history=s.told() if s.changed else None)
            for s in latest
        ],
        url=payload.get("url"),
        resolution_minutes=resolution_minutes(payload),
        service=payload.get(P.SERVICE),
        env=payload.get(P.ENV),
        flavor=payload.get(P.FLAVOR),
        component_tags=payload.get(P.TAGS) or [],
        root_cause=payload.get("root_cause"),
        signature_match=any(b.kind == SIGNATURE for b in boosts),
        reasons=[weak_fix(b) if confidence == "low" and b.kind == FIXED else b.text for b in boosts],
        reason_kinds=[b.kind for b in boosts],
        boosts=boosts,
    )
