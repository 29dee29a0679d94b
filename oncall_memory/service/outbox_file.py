"""The outbox's file: its tables, its rows as the service reads them, and one connection with its lock and
its transactions, which the outbox's parts (`claims`, `delivery_queue`, `outbox`) share."""

from __future__ import annotations

import sqlite3
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..jobs import Job
from ..redact import already_redacted
from ..store.sqlite_file import open_db

NEW, PENDING, SENDING, DONE, FAILED = "new", "pending", "sending", "done", "failed"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (alert TEXT PRIMARY KEY, job TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (key TEXT PRIMARY KEY, job TEXT NOT NULL, created_at REAL NOT NULL,
    size INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS deliveries (
    job TEXT NOT NULL, target TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    next_at REAL NOT NULL, deadline REAL NOT NULL, ambiguous INTEGER NOT NULL DEFAULT 0, body TEXT,
    last_error TEXT, updated_at REAL NOT NULL, PRIMARY KEY (job, target));
CREATE INDEX IF NOT EXISTS due ON deliveries (target, state, next_at);
CREATE TABLE IF NOT EXISTS targets (name TEXT PRIMARY KEY, failing_since REAL, last_error TEXT, last_ok REAL);
"""


@dataclass(frozen=True)
class Delivery:
    job: Job
    target: str
    attempts: int  # including the one now being made
    deadline: float
    ambiguous: bool
    body: dict[str, Any]


@dataclass(frozen=True)
class TargetHealth:
    name: str
    failing_since: float | None
    last_error: str | None
    waiting: int  # deliveries not yet done


# Alert keys per statement: SQLite builds before 3.32 bound a statement to 999 variables.
CHUNK = 900


def _chunks(keys: list[str]) -> list[list[str]]:
    return [keys[at : at + CHUNK] for at in range(0, len(keys), CHUNK)]


def _storable(job: Job) -> bytes:
    # Compressed: a storm's alerts repeat their labels and wording, and a 10,000-alert group's job is one row
    # (written to the WAL too) that zlib keeps to a tenth.
    return zlib.compress(job.model_dump_json().encode(), 1)


def _stored_job(raw: str | bytes) -> Job:
    # Redacted when it was claimed: read back as it was stored, not scanned again. (Text: an outbox written
    # before jobs were compressed.)
    with already_redacted():
        return Job.model_validate_json(zlib.decompress(raw) if isinstance(raw, bytes) else raw)


class OutboxFile:
    """One outbox file, opened (WAL: the CLI reads while the service writes), with the lock every call holds."""

    def __init__(self, path: Path | str):
        self.path = str(path)
        self._db = open_db(self.path, _SCHEMA, what="the outbox")
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an error): a group of writes lands whole or not at all."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
