"""Ingest: validate, distill, diff against the store, embed what changed, write.

Idempotent by construction: point ids come from incident ids, and an incident whose distilled
text and payload hash are unchanged costs no embedding call and no write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from . import payload as P
from .backlog import Rejected
from .distill import distill, redact_incident
from .embedders import Embedder
from .errors import EmbeddingFailed
from .incident import Incident
from .lexical import sparse_vector
from .store import IncidentStore, StoredPoint

log = logging.getLogger(__name__)


@dataclass
class Prepared:
    """An incident ready to store: redacted, distilled, with its payload and hashes."""

    incident: Incident
    text: str
    payload: dict
    point_id: str  # uuid5, computed once: every later step keys on it


@dataclass
class IngestReport:
    fetched: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0
    embedding_calls: int = 0
    rejections: list[Rejected] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "fetched": self.fetched,
            "new": self.new,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "rejected": self.rejected,
            "embedding_calls": self.embedding_calls,
        }

    def add(self, other: IngestReport) -> None:
        for key in ("fetched", "new", "updated", "unchanged", "rejected", "embedding_calls"):
            setattr(self, key, getattr(self, key) + getattr(other, key))
        self.rejections.extend(other.rejections)


def prepare(incident: Incident) -> Prepared:
    """Redact secrets from every field, distill the signal lines, build the payload."""
    clean = redact_incident(incident)
    text = distill(clean)
    return Prepared(clean, text, P.build_payload(clean, text), clean.point_id)


def collect(items: Iterable[Incident | Rejected], report: IngestReport) -> list[Prepared]:
    """Prepare every incident, counting rejections; a later line for the same incident wins."""
    latest: dict[str, Prepared] = {}
    for item in items:
        if isinstance(item, Rejected):
            report.rejected += 1
            report.rejections.append(item)
            log.debug("rejected %s", item)
            continue
        report.fetched += 1
        prepared = prepare(item)
        latest.pop(prepared.point_id, None)  # keep first-seen order, last-seen content
        latest[prepared.point_id] = prepared
    return list(latest.values())


@dataclass
class BatchPlan:
    """What one batch needs: which incidents to embed, which only need their payload replaced."""

    to_embed: list[Prepared]
    payload_only: dict[str, dict]
    report: IngestReport


def plan_batch(batch: Sequence[Prepared], store: IncidentStore) -> BatchPlan:
    """Diff a batch against the store by (point id, text hash, record hash)."""
    report = IngestReport()
    stored = store.stored_hashes([p.point_id for p in batch])
    to_embed: list[Prepared] = []
    payload_only: dict[str, dict] = {}
    for p in batch:
        before = stored.get(p.point_id)
        if before is None:
            report.new += 1
            to_embed.append(p)
        elif before == (p.payload[P.TEXT_HASH], p.payload[P.RECORD_HASH]):
            report.unchanged += 1
        elif before[0] == p.payload[P.TEXT_HASH]:
            report.updated += 1  # facts changed (a fix outcome, a status): same vector, new payload
            payload_only[p.point_id] = p.payload
        else:
            report.updated += 1
            to_embed.append(p)
    return BatchPlan(to_embed, payload_only, report)


def embed_texts(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """One embedding call, checked: raises `EmbeddingFailed` on a wrong count or dimension."""
    vectors = embedder.embed(texts)
    if len(vectors) != len(texts) or any(len(v) != embedder.dimension for v in vectors):
        raise EmbeddingFailed(
            f"{embedder.model} returned {len(vectors)} vectors for {len(texts)} texts, or a wrong dimension"
        )
    return vectors


def write_batch(store: IncidentStore, plan: BatchPlan, vectors: Sequence[Sequence[float]]) -> None:
    """Write a planned batch: whole points for the embedded ones, payloads for the rest."""
    points = [StoredPoint(p.point_id, list(v), sparse_vector(p.text), p.payload) for p, v in zip(plan.to_embed, vectors)]
    store.write(points)
    store.replace_payloads(plan.payload_only)


Embed = Callable[[list[str]], list[list[float]]]
Write = Callable[[BatchPlan, list[list[float]]], None]


def ingest_batch(batch: Sequence[Prepared], store: IncidentStore, embed: Embed, write: Write) -> IngestReport:
    """Store one batch: diff, embed what changed (one call), then write. A failed embedding call
    writes nothing. `embed` and `write` are the plain functions, or the flow's tasks around them.

    Raises `EmbeddingFailed` (the batch is untouched in the store).
    """
    plan = plan_batch(batch, store)
    vectors: list[list[float]] = []
    if plan.to_embed:
        plan.report.embedding_calls += 1
        vectors = embed([p.text for p in plan.to_embed])
    if plan.to_embed or plan.payload_only:
        write(plan, vectors)
    return plan.report


def ingest(
    items: Iterable[Incident | Rejected],
    store: IncidentStore,
    embedder: Embedder,
    *,
    batch_size: int = 64,
    on_batch: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Ingest a backlog into `store`. Returns the counts; `on_batch(done, total)` reports progress.

    Raises `EmbeddingFailed` when a batch cannot be embedded: earlier batches stay written (they are
    complete), the failing batch and later ones are not written at all; re-running completes them.
    """
    report = IngestReport()
    prepared = collect(items, report)
    store.ensure_collection(embedder.model, embedder.dimension)
    for start in range(0, len(prepared), batch_size):
        batch = prepared[start : start + batch_size]
        try:
            report.add(ingest_batch(
                batch, store, lambda texts: embed_texts(embedder, texts), lambda plan, v: write_batch(store, plan, v)
            ))
        except EmbeddingFailed as exc:
            exc.report = report  # what was done before the failure, for the caller to show
            raise
        if on_batch:
            on_batch(min(start + batch_size, len(prepared)), len(prepared))
    return report
