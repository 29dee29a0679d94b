"""What the CLI asks of a running service that owns the memory: an embedded store has one owner, and while
the service holds it `ingest` and `verify` could not open it. They post here instead and report as they
would standalone (the CLI's `cli/service_memory.py`).

- `POST /ingest`: a batch of incidents (each validated and redacted here, where it enters), stored by the
  service's memory; answers the batch's report, rejected incidents named by their place in the batch.
- `POST /verify`: every stored point checked against the contract, and a backlog's (source, id) pairs.
- `POST /backup`: a consistent copy of the collection, sent as a tar of the backup directory's files (the
  CLI unpacks it where it was asked to: the service writes nowhere but its own data dir).
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.background import BackgroundTask

from ..datadir import ENGINE_HEADROOM, stored_bytes
from ..domain.incident import Incident
from ..domain.rejected import Rejected, validation_message
from ..errors import EmbeddingFailed
from ..ingest.ingest import IngestStopped
from ..redact import redact
from .auth import writer
from .contract import errors
from .deps import MemoryDep, SettingsDep
from .request_body import documented_body, parse, parse_json, raw_json_body

router = APIRouter(dependencies=[Depends(writer)], tags=["maintenance"], responses=errors(401, 503))

MAX_BATCH = 1000  # incidents in one post; the CLI sends a few hundred (and under the body limit)


class IngestRequest(BaseModel):
    """A batch of incidents as the backlog format gives them (docs/integrations.md)."""

    incidents: list[dict[str, Any]] = Field(max_length=MAX_BATCH)


class IngestAnswer(BaseModel):
    new: int
    updated: int
    unchanged: int
    rejected: int
    embedding_calls: int
    fetched: int
    rejections: list[dict[str, str]]


@router.post(
    "/ingest",
    response_model=IngestAnswer,
    openapi_extra=documented_body(IngestRequest),
    responses=errors(400, 413, 415, 422),
)
def ingest(memory: MemoryDep, raw: bytes = Depends(raw_json_body)) -> dict[str, Any]:
    req = parse(IngestRequest, parse_json(raw))
    items: list[Incident | Rejected] = []
    for i, data in enumerate(req.incidents):
        place = redact(f"incident {i + 1} of the batch ({str(data.get('id', 'no id'))[:100]})")  # the id is input
        try:
            items.append(Incident.model_validate(data))
        except ValidationError as exc:
            items.append(Rejected(place, validation_message(exc)))
    try:
        report = memory.ingest(items)
    except IngestStopped as exc:
        raise HTTPException(503, f"stopped: {exc}; batches before it are stored ({exc.report.counts()})") from exc
    except EmbeddingFailed as exc:
        raise HTTPException(503, str(exc)) from exc
    return {
        **report.counts(),
        "fetched": report.fetched,
        "rejections": [{"where": r.where, "reason": r.reason} for r in report.rejections],
    }


class VerifyRequest(BaseModel):
    """Optionally, the backlog to check against: its incidents' (source, id) pairs."""

    source: list[tuple[str, str]] | None = None


class VerifyAnswer(BaseModel):
    checked: int
    count: int | None
    expected: int | None
    problems: list[str]
    missing: list[str] | None
    extra: list[str] | None
    recounted: bool
    drift: list[str]


@router.post(
    "/verify",
    response_model=VerifyAnswer,
    openapi_extra=documented_body(VerifyRequest),
    responses=errors(400, 413, 415, 422),
)
def verify(memory: MemoryDep, raw: bytes = Depends(raw_json_body)) -> dict[str, Any]:
    """Every stored point checked against the contract (and the backlog, when given): what `verify` prints."""
    req = parse(VerifyRequest, parse_json(raw))
    return asdict(memory.verify(req.source))


@router.post(
    "/backup",
    response_class=FileResponse,
    responses={200: {"description": "The backup's files as a tar", "content": {"application/x-tar": {}}}},
)
def backup(memory: MemoryDep, settings: SettingsDep) -> FileResponse:
    """A consistent copy of every point (`Memory.backup`), made beside the store and sent as a tar."""
    if settings.qdrant_url is None and (store := Path(settings.store_location)).is_dir():
        # The copy and then its tar, each about the store's size: refused (503) before a byte is written.
        settings.dir.need(2 * stored_bytes(store) + ENGINE_HEADROOM, "back up the memory (a copy, then its tar)")
    work = Path(tempfile.mkdtemp(prefix="backup-", dir=settings.dir.root)) / "backup"
    try:
        manifest = memory.backup(work)
        archive = work.parent / "backup.tar"
        with tarfile.open(archive, "w") as tar:
            for name in sorted(p.name for p in work.iterdir()):
                tar.add(work / name, arcname=name)
    except BaseException:
        shutil.rmtree(work.parent, ignore_errors=True)
        raise
    return FileResponse(
        archive,
        media_type="application/x-tar",
        headers={"X-Backup-Count": str(manifest["count"])},
        background=BackgroundTask(shutil.rmtree, work.parent, ignore_errors=True),
    )
