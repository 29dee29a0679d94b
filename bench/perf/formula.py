"""Fact ranking in the engine (Qdrant's formula query) or in Python (the retriever)? Measured, one run.

    python -m bench.perf.formula [--incidents 10000] [--dim 1536] [--queries 100]

On Edge: candidates = RRF fusion of dense + sparse (limit 50), rescored by meaning, then
(a) a Formula over $score with the same boosts as the retriever (same flavor/env/service, shared tags,
a fix that worked, an exponential decay on opened_at), top 5 with payload; vs (b) the retriever, which
ranks the same candidates in Python and also explains them. The formula cannot express the retriever's
word-overlap share or produce reasons, so it is the cheaper of the two by construction; the question is
by how much.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import qdrant_edge as E
from synth import sample_alerts, synthetic_incidents

from oncall_memory.domain import payload as P
from oncall_memory.domain.alert import Alert
from oncall_memory.domain.distill import distill_alert
from oncall_memory.domain.lexical import sparse_vector
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.store.engines import DENSE, SPARSE
from oncall_memory.store.engines.base import RRF_K

from .engine import edge_shard, store_of
from .lookup import pct


def formula_request(alert: Alert, dense, sparse, settings: Settings, now: datetime) -> E.QueryRequest:
    w = settings.weights

    def boost(weight: float, key: str, value) -> E.Expression:
        cond = E.FieldCondition(key=key, match=E.MatchValue(value))
        return E.Expression.Mult([E.Expression.Constant(weight), E.Expression.Condition(cond)])

    terms = [E.Expression.Variable("$score")]
    for value, key, weight in (
        (alert.flavor, P.FLAVOR, w.same_flavor),
        (alert.env, P.ENV, w.same_env),
        (alert.service, P.SERVICE, w.same_service),
    ):
        if value:
            terms.append(boost(weight, key, value))
    terms += [boost(w.shared_tag, P.TAGS, t) for t in alert.component_tags[: w.max_shared_tags]]
    terms.append(boost(w.worked_fix, P.HAS_WORKING_FIX, True))
    decay = E.Expression.Decay(
        E.DecayKind.Exp,
        E.Expression.DatetimeKey(P.OPENED_AT),
        target=E.Expression.Datetime(now.isoformat()),
        midpoint=0.5,
        scale=w.recency_half_life_days * 86400,
    )
    terms.append(E.Expression.Mult([E.Expression.Constant(w.recency), decay]))
    limit = settings.candidates
    fused = E.Prefetch(
        limit=limit,
        query=E.Fusion.Rrf(k=RRF_K),  # type: ignore[arg-type]  # the stub's union leaves Fusion's variants out
        prefetches=[
            E.Prefetch(limit=limit, query=E.Query.Nearest(dense, using=DENSE)),
            E.Prefetch(
                limit=limit,
                query=E.Query.Nearest(E.SparseVector(list(sparse.indices), list(sparse.values)), using=SPARSE),
            ),
        ],
    )
    rescored = E.Prefetch(limit=limit, query=E.Query.Nearest(dense, using=DENSE), prefetches=[fused])
    return E.QueryRequest(limit=5, query=E.Formula(E.Expression.Sum(terms)), prefetches=[rescored], with_payload=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=10_000)
    ap.add_argument("--dim", type=int, default=1536)
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), embedder="fake", store="edge")
    embedder = FakeEmbedder(args.dim)
    retriever = Memory.open(settings.model_copy(update={"embed_batch_size": 256}), embedder=embedder)
    store = store_of(retriever)
    retriever.ingest(synthetic_incidents(args.incidents))
    alerts = [Alert.model_validate(a) for a in sample_alerts()]
    now = datetime.now(timezone.utc)

    def formula(i: int) -> None:
        alert = alerts[i % len(alerts)]
        text = distill_alert(alert.text)
        edge_shard(store).query(formula_request(alert, embedder.embed([text])[0], sparse_vector(text), settings, now))

    def python(i: int) -> None:
        retriever.similar(alerts[i % len(alerts)], limit=5, now=now)

    formula(0)
    python(0)
    times: dict[str, list[float]] = {"formula in the engine": [], "retriever (Python rank + reasons)": []}
    for i in range(args.queries):
        for label, fn in (("formula in the engine", formula), ("retriever (Python rank + reasons)", python)):
            t = time.perf_counter()
            fn(i)
            times[label].append((time.perf_counter() - t) * 1000)
    print(f"{args.incidents} incidents, {args.dim} dims, fake embedder, Edge, {args.queries} lookups each, top 5")
    for label, xs in times.items():
        print(f"{label:>36}: p50 {statistics.median(xs):6.2f} ms  p99 {pct(xs, 99):6.2f} ms")
    f, p = (statistics.median(xs) for xs in times.values())
    print(f"retriever / formula = {p / f:.2f}x")
    store.close()


if __name__ == "__main__":
    main()
