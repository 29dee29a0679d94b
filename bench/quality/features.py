"""What the protocol fits on: each alert's candidates, read once through the real lookup, as numbers.

For each query of a set the memory answers the default ranked lookup for 50 (the candidates ranking
orders), and each candidate's evidence is read back from its typed boosts: meaning, the plain and the
rarity-weighted share of the alert's words, the share weighed by the words' rarity in the whole
collection, and the units of every fact that moves it (same title, rare tokens, symptoms, flavor, env,
service, tags, a worked fix, its age, a signature pin). Any weighting of them can then be scored without
another lookup (`bench.quality.fit`). Beside them: BM25 and the unranked dense and hybrid answers.

Extracted features are cached per set, per embedder and per version of the code that reads them.
"""

from __future__ import annotations

import hashlib
import math
import pickle
import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path

import numpy as np

from oncall_memory import Memory, Settings
from oncall_memory.answer import ranking as R
from oncall_memory.answer.bm25 import BM25
from oncall_memory.answer.confidence import FEATURES
from oncall_memory.answer.retrieve import metric_words, metrics_named
from oncall_memory.domain import payload as P
from oncall_memory.domain.alert import Alert, Filters
from oncall_memory.domain.distill import distill_alert
from oncall_memory.domain.lexical import Rarity, idf, sparse_vector
from oncall_memory.domain.vocabulary import symptoms, terms
from oncall_memory.evaluation import LabelledQuery, PagerQuery
from oncall_memory.settings import RankingWeights
from oncall_memory.store.engines import Mode

from .sets import CACHE, EvalSet, SetQuery

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)  # ages are read from one fixed day: figures repeat
CANDIDATES = 50
DEPTH = 10
COLS = (
    "sim",  # cosine similarity of meaning
    "plain",  # share of the alert's words the incident holds
    "rarity",  # that share, each word weighed by its rarity among the candidates
    "idf",  # that share, each word weighed by its rarity in the whole memory
    "idf_known",  # the same, of the alert's words the memory holds at all (a word no incident has says nothing)
    "lex",  # the engine's word-search score, over the best of any incident (0: not in its first 50)
    "bm25",  # BM25's score, over the best of any incident
    "title",
    "rare",
    "symptom",
    "flavor",
    "env",
    "service",
    "tags",
    "fixed",
    "service_known",  # the alert and the incident each name a service (same or not)
    "env_known",
    "age",  # days
    "pinned",
)
C = {name: i for i, name in enumerate(COLS)}
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class QueryFeatures:
    query: SetQuery
    ids: list[str]  # the candidates, in the default lookup's order
    x: np.ndarray  # one row per candidate, columns COLS
    baselines: dict[str, list[str]]  # BM25, dense, hybrid: their first DEPTH ids
    levels: list[str]  # each candidate's confidence, as the product gave it
    evidence: np.ndarray  # each candidate's `confidence.Evidence`, as the product read it
    named: frozenset[str] = frozenset()  # the candidates that name a metric the alert's rule watches

    @cached_property
    def id_order(self) -> np.ndarray:
        """Each candidate's place among the ids sorted (code point order, as `sorted` gives): the ranking's last
        tie-break, as a key numpy can sort by."""
        places = np.empty(len(self.ids), np.int64)
        places[sorted(range(len(self.ids)), key=self.ids.__getitem__)] = np.arange(len(self.ids))
        return places


@dataclass
class SetFeatures:
    name: str
    same_problem: str
    queries: list[QueryFeatures]
    model: str


def alert_of(q: SetQuery, memory: Memory) -> tuple[Alert, Filters | None]:
    data = dict(q.alert)
    if "pager" in data:
        pq = PagerQuery(pager=data["pager"], payload=data["payload"], relevant=[])
        return pq.alert(memory), None
    lq = LabelledQuery(**data, relevant=[])
    return lq.alert(memory), lq.filters


def _units(boosts: list[R.Boost], weights: RankingWeights) -> dict[str, float]:
    out: dict[str, float] = {}
    for b in boosts:
        if b.kind == R.TITLE:
            out["title"] = 1
        elif b.kind == R.RARE:
            out["rare"] = min(len(b.detail), weights.max_rare_tokens)
        elif b.kind == R.SYMPTOM:
            out["symptom"] = len(b.detail)
        elif b.kind in (R.FLAVOR, R.ENV, R.SERVICE):
            out[b.kind] = 1
        elif b.kind == R.TAGS:
            out["tags"] = min(len(b.detail), weights.max_shared_tags)
        elif b.kind == R.FIXED:
            out["fixed"] = 1
        elif b.kind == R.AGE:
            out["age"] = b.detail
        elif b.kind == R.SIGNATURE:
            out["pinned"] = 1
    return out


def _version(s: EvalSet, model: str) -> str:
    h = hashlib.sha256(model.encode())
    for path in sorted((ROOT / "oncall_memory").rglob("*.py")) + [Path(__file__)]:
        h.update(path.read_bytes())
    for i in s.incidents:
        h.update(i.model_dump_json().encode())
    for q in s.queries:
        h.update(repr(q.as_json()).encode())
    return h.hexdigest()[:16]


def extract(s: EvalSet, settings: Settings | None = None, *, cache: bool = True) -> SetFeatures:
    settings = settings or Settings(data_dir=Path(tempfile.mkdtemp(prefix=f"generalise-{s.name}-")))
    settings = settings.replace(data_dir=Path(tempfile.mkdtemp(prefix=f"generalise-{s.name}-")))
    path = CACHE.parent / "generalise" / f"{s.name}-{_version(s, settings.embedder + str(settings.embed_model))}.pkl"
    if cache and path.exists():
        return pickle.loads(path.read_bytes())
    weights = settings.weights
    with Memory.open(settings) as memory:
        memory.ingest(s.incidents)
        memory.measure_scale()  # whatever the shipped calibration reads: the protocol judges the standing
        model = memory.embedder.model
        payloads = memory.payloads()
        texts = {key: p.get(P.TEXT) or "" for key, p in payloads.items()}
        bm25 = BM25(texts)
        df = Counter(t for p in payloads.values() for t in set(p.get(P.TERMS) or ()))
        n = len(payloads)
        out = []
        for q in s.queries:
            alert, filters = alert_of(q, memory)
            skip = {q.own} if q.own else set()
            read = distill_alert(alert.text)
            told = symptoms(f"{alert.text}\n{read}")
            query_terms = set(sparse_vector(read, terms(told)).indices)
            weight = {t: idf(n, df.get(t, 0)) for t in query_terms}
            total = sum(weight.values()) or 1.0
            known = sum(w for t, w in weight.items() if df.get(t)) or 1.0
            lookup = memory.similar(alert, filters=filters, limit=CANDIDATES, now=NOW)
            words = memory.similar(alert, filters=filters, limit=CANDIDATES, mode="lexical", rank=False, now=NOW)
            # Over the best of the others: in a leave-one-out set the alert's own incident tops its words.
            lex = {nb.id: nb.relevance for nb in words.neighbours if nb.id not in skip}
            top_lex = max(lex.values(), default=0.0) or 1.0
            lex = {k: v / top_lex for k, v in lex.items()}
            b25 = bm25.scores(read, without=skip)
            top25 = max(b25.values(), default=0.0) or 1.0
            kept = [nb for nb in lookup.neighbours if nb.id not in skip]
            held = {nb.id: frozenset(payloads.get(nb.id, {}).get(P.TERMS) or ()) for nb in kept}
            rarity = Rarity(frozenset(query_terms), held.values())
            rows, evidence = [], []
            for nb in kept:
                mine = held[nb.id]
                row = np.zeros(len(COLS))
                row[C["sim"]] = nb.similarity or 0.0
                row[C["plain"]] = len(query_terms & mine) / len(query_terms) if query_terms else 0.0
                row[C["rarity"]] = rarity.share(mine)
                row[C["idf"]] = sum(weight[t] for t in query_terms & mine) / total
                row[C["idf_known"]] = sum(weight[t] for t in query_terms & mine) / known
                row[C["lex"]], row[C["bm25"]] = lex.get(nb.id, 0.0), b25.get(nb.id, 0.0) / top25
                row[C["service_known"]] = float(bool(alert.service and nb.service))
                row[C["env_known"]] = float(bool(alert.env and nb.env))
                row[C["age"]] = math.nan
                for k, v in _units(nb.boosts, weights).items():
                    row[C[k]] = v
                rows.append(row)
                evidence.append(tuple(nb.evidence) if nb.evidence else (0.0,) * len(FEATURES))
            ids = [nb.id for nb in kept]
            metrics = metric_words(alert.metrics)
            named = frozenset(i for i in ids if metrics_named(metrics, held[i]))
            # How far each stands above the best of the others by meaning, among the kept candidates only.
            sims = [nb.similarity or 0.0 for nb in kept]
            for i, e in enumerate(evidence):
                rest = max((x for j, x in enumerate(sims) if j != i), default=sims[i])
                evidence[i] = (e[0], sims[i] - rest if kept[i].similarity is not None else 0.0, *e[2:])
            levels: list[str] = [nb.confidence for nb in kept]

            def unranked(mode: Mode) -> list[str]:
                found = memory.similar(alert, filters=filters, limit=DEPTH + 1, mode=mode, rank=False, now=NOW)
                return [nb.id for nb in found.neighbours if nb.id not in skip][:DEPTH]

            baselines = {
                "BM25": bm25.ranked(read, limit=DEPTH, without=skip),
                "dense": unranked("dense"),
                "hybrid": unranked("hybrid"),
            }
            out.append(
                QueryFeatures(
                    q, ids, np.array(rows).reshape(len(rows), len(COLS)), baselines, levels, np.array(evidence), named
                )
            )
    features = SetFeatures(s.name, s.same_problem, out, model)
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(features))
    return features
