"""Ingest: validate, distill, diff against the store, embed what changed, write.

Idempotent by construction: point ids come from incident ids, and an incident whose distilled
text and payload hash are unchanged costs no embedding call and no write. `ingest` is the one
driver; its embed step is the only part a caller swaps (the Prefect flow passes its retried task).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from ..domain import payload as P
from ..domain.distill import distill
from ..domain.incident import Incident
from ..domain.lexical import Sparse
from ..domain.rejected import Rejected
from ..embedders import Embedder
from ..errors import EmbeddingFailed
from ..store.engines import IncidentStore, StoredPoint

log = logging.getLogger(__name__)

Embed = Callable[[Sequence[str]], list[list[float]]]


@dataclass
class Prepared:
    """An incident ready to store: redacted, distilled, with its payload and hashes."""

    incident: Incident
    text: str
    payload: dict[str, Any]
    point_id: str  # uuid5, computed once: every later step keys on it
    sparse: Sparse  # the words of the payload's text and symptoms, computed once


COUNTS = ("fetched", "new", "updated", "unchanged", "rejected", "embedding_calls")


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
        return {key: getattr(self, key) for key in COUNTS}

    def add(self, other: IngestReport) -> None:
        for key in COUNTS:
            setattr(self, key, getattr(self, key) + getattr(other, key))
        self.rejections.extend(other.rejections)


class IngestStopped(EmbeddingFailed):
    """A batch could not be embedded. Batches before it are stored (each is complete); it and later
    ones are not written at all, so a re-run completes the work. `report` says what was done."""

    def __init__(self, message: str, report: IngestReport):
        super().__init__(message)
        self.report = report


def prepare(incident: Incident) -> Prepared:
    """Distill the signal lines and build the payload (the incident was redacted as it was built)."""
    text = distill(incident)
    payload, sparse = P.build_point(incident, text)
    return Prepared(incident, text, payload, incident.point_id, sparse)


def where(incident: Incident) -> str:
    return f"{incident.source} incident {incident.id}"


def collect(items: Iterable[Incident | Rejected], report: IngestReport) -> list[Prepared]:
    """Prepare every incident, counting rejections; a later line for the same incident wins. An incident
    whose signal lines are all noise is rejected here: there is nothing to embed, so no call is made."""
    latest: dict[str, Prepared] = {}
    for item in items:
        if isinstance(item, Incident):
            report.fetched += 1
            prepared = prepare(item)
            if prepared.text:
                latest.pop(prepared.point_id, None)  # keep first-seen order, last-seen content
                latest[prepared.point_id] = prepared
                continue
            item = Rejected(
                where(item),
                "nothing to embed: the title, root cause, error signature and on-call note "
                "are empty or only noise (addresses, hashes, times); give it a descriptive title",
            )
        report.rejected += 1
        report.rejections.append(item)
        log.debug("rejected %s", item)
    return list(latest.values())


@dataclass
class BatchPlan:
    """What one batch needs: which incidents to embed, which only need their payload replaced."""

    to_embed: list[Prepared]
    payload_only: dict[str, dict[str, Any]]
    report: IngestReport
    kinds: dict[str, str] = field(default_factory=dict)  # point id -> "new" | "updated", for what is embedded


def plan_batch(batch: Sequence[Prepared], stored: dict[str, tuple[str, str]]) -> BatchPlan:
    """Diff a batch against the stored (text hash, record hash) of its point ids."""
    report = IngestReport()
    to_embed: list[Prepared] = []
    payload_only: dict[str, dict[str, Any]] = {}
    kinds: dict[str, str] = {}
    for p in batch:
        before = stored.get(p.point_id)
        if before is None:
            report.new += 1
            kinds[p.point_id] = "new"
            to_embed.append(p)
        elif before == (p.payload[P.TEXT_HASH], p.payload[P.RECORD_HASH]):
            report.unchanged += 1
        elif before[0] == p.payload[P.TEXT_HASH]:
            report.updated += 1  # facts changed (a fix outcome, a status): same vector, new payload
            payload_only[p.point_id] = p.payload
        else:
            report.updated += 1
            kinds[p.point_id] = "updated"
            to_embed.append(p)
    return BatchPlan(to_embed, payload_only, report, kinds)


def embed_texts(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """One embedding call, checked: raises `EmbeddingFailed` on a wrong count or dimension."""
    vectors = embedder.embed(texts)
    if len(vectors) != len(texts) or any(len(v) != embedder.dimension for v in vectors):
        raise EmbeddingFailed(
            f"{embedder.model} returned {len(vectors)} vectors for {len(texts)} texts, or a wrong dimension"
        )
    return vectors


def fit(p: Prepared, embedder: Embedder) -> Prepared:
    """`p` with its text cut to what the model takes; a cut is recorded in the payload (outside the record
    hash, so an unchanged incident stays unchanged)."""
    text, cut = embedder.truncate(p.text)
    if not cut:
        return p
    return Prepared(p.incident, text, {**p.payload, P.EMBEDDED_CUT: True}, p.point_id, p.sparse)


Embedded = list[tuple[Prepared, list[float]]]


def embed_isolating(batch: list[Prepared], embed: Embed, report: IngestReport) -> tuple[Embedded, list[Rejected]]:
    """Embed `batch` in one call. If the embedder refuses an input, halve the batch until each refused
    incident stands alone: it is rejected with the embedder's reason, every other one is embedded
    (about 2·log2(n) extra calls for one bad incident in n). An outage (not a refusal) raises
    `EmbeddingFailed` as it is."""
    if not batch:
        return [], []
    report.embedding_calls += 1
    try:
        return list(zip(batch, embed([p.text for p in batch]))), []
    except EmbeddingFailed as exc:
        if not exc.refused:
            raise
        if len(batch) == 1:
            log.warning("%s: the embedder refused it: %s", where(batch[0].incident), exc)
            return [], [Rejected(where(batch[0].incident), f"the embedder refused it: {exc}")]
        half = len(batch) // 2
        (done_a, refused_a), (done_b, refused_b) = (
            embed_isolating(part, embed, report) for part in (batch[:half], batch[half:])
        )
        return done_a + done_b, refused_a + refused_b


def ingest(
    items: Iterable[Incident | Rejected],
    store: IncidentStore,
    embedder: Embedder,
    *,
    embed: Embed | None = None,
    batch_size: int = 64,
    lock: AbstractContextManager[Any] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
    room: Callable[[int], None] | None = None,
) -> IngestReport:
    """Ingest a backlog into `store`; returns the counts. `embed` replaces the plain embedding call (the
    flow passes its retried task); `lock` is held around store calls only, never around embedding;
    `on_batch(done, total)` reports progress; `room(n)` is asked before `n` points are written and raises
    `DiskFull` when the disk cannot take them (the batches before it stay written, whole).

    Raises `IngestStopped` (an `EmbeddingFailed`) when a batch cannot be embedded.
    """
    embed = embed or (lambda texts: embed_texts(embedder, texts))
    lock = lock or nullcontext()
    report = IngestReport()
    prepared = collect(items, report)
    room = room or (lambda n: None)
    if prepared:
        with lock:
            if not store.exists():
                room(min(len(prepared), batch_size))
            store.ensure_collection(embedder.model, embedder.dimension)
    for start in range(0, len(prepared), batch_size):
        batch = prepared[start : start + batch_size]
        with lock:
            plan = plan_batch(batch, store.stored_hashes([p.point_id for p in batch]))
        try:
            embedded, refused = embed_isolating([fit(p, embedder) for p in plan.to_embed], embed, plan.report)
        except EmbeddingFailed as exc:
            raise IngestStopped(str(exc), report) from exc
        # A refused incident was planned as new or updated; it is a rejection instead, and nothing is written.
        embedded_ids = {p.point_id for p, _ in embedded}
        for p in plan.to_embed:
            if p.point_id not in embedded_ids:
                setattr(plan.report, plan.kinds[p.point_id], getattr(plan.report, plan.kinds[p.point_id]) - 1)
        plan.report.rejected += len(refused)
        plan.report.rejections.extend(refused)
        room(len(embedded) + len(plan.payload_only))
        with lock:
            store.write([StoredPoint(p.point_id, list(v), p.sparse, p.payload) for p, v in embedded])
            # Facts changed, not the text: no embedding, but the sparse vector follows the payload (its
            # symptom terms may be new).
            store.replace_payloads(
                plan.payload_only, {p.point_id: p.sparse for p in batch if p.point_id in plan.payload_only}
            )
        report.add(plan.report)
        if on_batch:
            on_batch(min(start + batch_size, len(prepared)), len(prepared))
    return report
