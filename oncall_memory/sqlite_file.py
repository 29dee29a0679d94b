"""The small SQLite files the memory keeps beside its store (responders' feedback, the service's outbox)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_db(path: str, schema: str) -> sqlite3.Connection:
    """Open (or create, with `schema`) the database at `path`, or `:memory:`. One connection shared by the
    threads of a process, which serialise their own transactions; autocommit, so each caller's `BEGIN`
    is its own. A file gets WAL so another process (the CLI) reads while this one writes."""
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    if path != ":memory:":
        db.execute("PRAGMA journal_mode=WAL")
    db.executescript(schema)
    return db
