"""Backups a team can trust: a consistent copy of every point, checked before it is put back, and a
check of a live store against its own contract.

Format (engine-neutral, so a backup of one engine restores into another): a directory holding
`points.jsonl.gz` (one point per line: id, whole payload, sparse vector, dense vector as base64 float32)
and `manifest.json` (collection, contract, count, SHA-256 of the points file, when). Qdrant Edge can
load a server's snapshot but cannot make one, hence a format of our own.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..domain import payload as P
from ..domain.distill import content_hash
from ..domain.incident import Incident, point_id
from ..domain.lexical import Sparse
from ..errors import InvalidInput, NothingStored, StoreDamaged
from .engines import DENSE, SPARSE, IncidentStore, StoredPoint
from .engines.base import no_collection

FORMAT = 1
POINTS = "points.jsonl.gz"
MANIFEST = "manifest.json"
REQUIRED = (P.INCIDENT_ID, "title", P.SOURCE, P.TEXT, P.TEXT_HASH, P.RECORD_HASH)


@dataclass
class Verification:
    checked: int = 0  # points read
    count: int | None = None  # what the engine says it holds
    expected: int | None = None  # what was written, as recorded beside the engine
    problems: list[str] = field(default_factory=list)
    # Against a source (`verify --source`): its incidents not stored, and stored incidents of its sources
    # it no longer holds; None when no source was given.
    missing: list[str] | None = None
    extra: list[str] | None = None
    recounted: bool = False  # the recorded count was set again from a store that matched its source
    # What disagrees without any point being damaged: the recorded count, the source's incidents.
    drift: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not self.problems and not self.drift


def verify(
    store: IncidentStore, *, source: dict[str, tuple[str, str]] | None = None, max_listed: int = 20
) -> Verification:
    """Read every point and check it against the contract: both vectors there, the dense one of the
    contract's dimension and finite, the payload whole, its text matching its hash, its id derived from
    the incident's; and the count against what was written, either way (more points than were recorded
    is an interrupted write, fewer a loss: a count that drifted one way hides a loss the other way).

    `source` (point id -> (source, incident id), derived from a backlog): which of its incidents are not stored, and
    which stored incidents of its sources it does not hold."""
    result = Verification()
    stored: dict[str, tuple[str, str]] = {}  # point id -> (source, incident id)
    if not store.exists():
        raise NothingStored(no_collection(store.collection, store.location))
    dimension = store.contract().get("dimension")
    bad: list[str] = []
    try:
        for pid, payload, vectors in store.points(with_vectors=True):
            result.checked += 1
            stored[pid] = (str(payload.get(P.SOURCE)), str(payload.get(P.INCIDENT_ID)))
            problem = _point_problem(pid, payload, vectors or {}, dimension)
            if problem:
                bad.append(problem)
    except StoreDamaged as exc:
        result.problems.append(f"reading stopped after {result.checked} points: {exc}")
    if bad:
        result.problems.append(
            f"{len(bad)} damaged point(s): " + "; ".join(bad[:max_listed]) + (" ..." if len(bad) > max_listed else "")
        )
    try:
        result.count = store.count()
    except StoreDamaged as exc:
        result.problems.append(f"cannot count: {exc}")
    result.expected = store.expected_count()
    if (
        result.count is not None
        and result.count != result.checked
        and not any("reading stopped" in p for p in result.problems)
    ):
        result.problems.append(f"the engine counts {result.count} points but {result.checked} could be read")
    if result.expected is not None and result.count is not None and result.count < result.expected:
        result.problems.append(
            f"{result.expected} incidents were written but the engine holds {result.count}: "
            f"{result.expected - result.count} lost (its id tracker is likely damaged)"
        )
    elif result.expected is not None and result.count is not None and result.count > result.expected:
        result.drift.append(
            f"the engine holds {result.count} incidents but {result.expected} were recorded as written: the "
            f"record drifted (an ingest stopped after writing, e.g. killed), so a later loss could hide "
            f"behind it. Check against the backlog: `oncall-memory verify --source PATH`"
        )
    if source is not None:
        _against_source(result, stored, source, max_listed)
    return result


def verify_against(store: IncidentStore, source: Iterable[Incident | tuple[str, str]] | None) -> Verification:
    """`verify`, against `source` (a backlog's incidents, or their (source, id) pairs) when given. When every
    stored point is the source's, whole, and the only problem was the recorded count's drift, the count is
    recorded again from what is stored."""
    pairs = None if source is None else [(i.source, i.id) if isinstance(i, Incident) else i for i in source]
    expected = None if pairs is None else {point_id(src, iid): (src, iid) for src, iid in pairs}
    result = verify(store, source=expected)
    whole = not result.problems and not result.missing and not result.extra
    if expected is not None and result.drift and whole and result.count == len(expected) == result.checked:
        store.record_count(result.count)
        result.expected, result.drift, result.recounted = result.count, [], True
    return result


def _against_source(
    result: Verification, stored: dict[str, tuple[str, str]], source: dict[str, tuple[str, str]], max_listed: int
) -> None:
    sources = {src for src, _ in source.values()}
    result.missing = sorted(iid for pid, (_, iid) in source.items() if pid not in stored)
    result.extra = sorted(iid for pid, (src, iid) in stored.items() if src in sources and pid not in source)

    def listed(ids: list[str]) -> str:
        return ", ".join(ids[:max_listed]) + (" ..." if len(ids) > max_listed else "")

    if result.missing:
        result.drift.append(
            f"{len(result.missing)} incident(s) of the source are not stored: {listed(result.missing)} "
            "(ingest it again: they are written, the rest left as they are)"
        )
    if result.extra:
        result.drift.append(f"{len(result.extra)} stored incident(s) are not in the source: {listed(result.extra)}")


def _point_problem(pid: str, payload: dict[str, Any], vectors: dict[str, Any], dimension: int | None) -> str | None:
    missing = [f for f in REQUIRED if not payload.get(f)]
    if missing:
        return f"{pid}: payload lacks {', '.join(missing)}"
    name = f"{payload[P.INCIDENT_ID]} ({pid})"
    dense = vectors.get(DENSE)
    if dense is None or len(dense) != dimension:
        return f"{name}: dense vector {'missing' if dense is None else f'of {len(dense)} dims, not {dimension}'}"
    if not all(math.isfinite(x) for x in dense):
        return f"{name}: dense vector holds a non-number"
    if vectors.get(SPARSE) is None:
        return f"{name}: sparse vector missing"
    if content_hash(payload[P.TEXT]) != payload[P.TEXT_HASH]:
        return f"{name}: text does not match its hash"
    if point_id(payload[P.SOURCE], payload[P.INCIDENT_ID]) != pid:
        return f"{name}: point id is not the one derived from the incident"
    return None


# -- backup and restore -----------------------------------------------------------------------------


def backup(store: IncidentStore, path: Path) -> dict[str, Any]:
    """Copy every point of `store` into the directory `path` (created; must not exist). Written beside
    and renamed into place, so a half-written backup never looks complete. Returns the manifest."""
    if path.exists():
        raise InvalidInput(f"{path} exists: give a new directory for the backup")
    if not store.exists():
        raise InvalidInput(f"no collection {store.collection!r} at {store.location} to back up")
    partial = path.with_name(path.name + ".partial")
    if partial.exists() or partial.is_symlink():
        # Not ours to delete: an earlier backup's leftovers, or whatever someone keeps under that name.
        raise InvalidInput(f"{partial} exists (an interrupted backup's, or someone's): remove it, or give another path")
    partial.mkdir(parents=True)
    try:
        manifest = _write_points(store, partial)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)  # ours, half-written
        raise
    partial.rename(path)
    return manifest


def _write_points(store: IncidentStore, partial: Path) -> dict[str, Any]:
    import numpy as np  # only a backup needs it: kept off the lookup path (CLI start-up time)

    count = 0
    with gzip.open(partial / POINTS, "wt", encoding="utf-8") as out:
        for pid, payload, vectors in store.points(with_vectors=True):
            assert vectors is not None  # asked for
            dense = np.asarray(vectors[DENSE], dtype="<f4")
            sparse: Sparse = vectors[SPARSE]
            out.write(
                json.dumps(
                    {
                        "id": pid,
                        "payload": payload,
                        "dense": base64.b64encode(dense.tobytes()).decode(),
                        "sparse": [list(sparse.indices), list(sparse.values)],
                    }
                )
                + "\n"
            )
            count += 1
    manifest = {
        "format": FORMAT,
        "collection": store.collection,
        "contract": store.contract(),
        "count": count,
        "sha256": _sha256(partial / POINTS),
        "created_at": datetime.now(timezone.utc).isoformat(),
    }
    (partial / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return manifest


def read_manifest(path: Path) -> dict[str, Any]:
    """The backup's manifest, after checking its points file is the one it describes."""
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path} is not an oncall-memory backup (no readable {MANIFEST}: {exc})") from exc
    if manifest.get("format") != FORMAT:
        raise InvalidInput(f"{path}: backup format {manifest.get('format')}, this oncall-memory reads {FORMAT}")
    if not (path / POINTS).exists() or _sha256(path / POINTS) != manifest.get("sha256"):
        raise InvalidInput(f"{path}: {POINTS} is missing or does not match its manifest (damaged or incomplete)")
    return manifest


def backed_up_points(path: Path, *, batch: int = 256) -> Iterator[list[StoredPoint]]:
    import numpy as np  # only a restore needs it: kept off the lookup path (CLI start-up time)

    pending: list[StoredPoint] = []
    with gzip.open(path / POINTS, "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            dense = np.frombuffer(base64.b64decode(row["dense"]), dtype="<f4").tolist()
            pending.append(StoredPoint(row["id"], dense, Sparse(*row["sparse"]), row["payload"]))
            if len(pending) >= batch:
                yield pending
                pending = []
    if pending:
        yield pending


def restore_into(target: IncidentStore, path: Path, manifest: dict[str, Any]) -> int:
    """Write the backup's points into the empty collection `target`. Returns the points written."""
    contract = manifest["contract"]
    target.ensure_collection(contract["embed_model"], contract["dimension"], like=contract)
    written = 0
    for points in backed_up_points(path):
        target.write(points)
        written += len(points)
    return written


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
