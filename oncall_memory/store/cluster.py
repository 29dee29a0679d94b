"""Moving the embedded store into a Qdrant server or cluster (`oncall-memory migrate --to URL`), vectors
and all: no embedding call.

The target collection is created with the layout a cluster needs (shards, replicas, int8 vectors in RAM
with the originals on disk: `QdrantStore._create`), unless it exists with the same contract. Copying is
resumable: each batch first asks the target which of its points it already holds with the same record
hash, and writes only the rest, so a copy stopped anywhere (a crash, a lost connection) is run again and
finishes, and a second run over a finished copy writes nothing. qdrant-client's own `migrate()` copies
the source's shard settings instead of taking new ones, and starts over every time.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..domain import payload as P
from ..errors import InvalidInput, OncallMemoryError
from .engines import DENSE, SPARSE, IncidentStore, StoredPoint

BATCH = 256


@dataclass(frozen=True)
class MigrationReport:
    source: int  # points in the embedded store
    written: int  # points this run wrote
    already: int  # points the target held already, the same (an earlier, stopped run's)
    target: int  # points the target holds now


def migrate_to(source: IncidentStore, target: IncidentStore, *, batch: int = BATCH) -> MigrationReport:
    """Copy every point of `source` into `target` (created from the source's contract when missing)."""
    if not source.exists():
        raise InvalidInput(f"no collection {source.collection!r} at {source.location} to migrate")
    contract = source.contract()
    # A collection already there must be of the same model and dimension (else ContractMismatch); one made
    # here keeps how the source quantizes its vectors.
    target.ensure_collection(contract["embed_model"], contract["dimension"], like=contract)
    total = written = already = 0
    pending: list[StoredPoint] = []

    def flush() -> None:
        nonlocal written, already
        held = target.retrieve([p.point_id for p in pending], fields=[P.RECORD_HASH])
        fresh = [p for p in pending if held.get(p.point_id, {}).get(P.RECORD_HASH) != p.payload.get(P.RECORD_HASH)]
        if fresh:
            target.write(fresh)
        written, already = written + len(fresh), already + len(pending) - len(fresh)
        pending.clear()

    for point_id, payload, vectors in source.points(with_vectors=True, batch=batch):
        assert vectors is not None  # asked for
        pending.append(StoredPoint(point_id, list(vectors[DENSE]), vectors[SPARSE], payload))
        total += 1
        if len(pending) >= batch:
            flush()
    if pending:
        flush()
    held = target.count()
    if held < total:
        raise OncallMemoryError(f"copied {total} points but {target.location} holds {held}: run migrate again")
    return MigrationReport(source=total, written=written, already=already, target=held)
