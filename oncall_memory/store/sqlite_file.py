"""The small SQLite files the memory keeps beside its store (responders' feedback, the service's outbox).

A damaged one (a disk fault, a copy cut short, something else written over it) must not stop lookups or
the service: it is set aside, kept for inspection as `<name>.damaged-<UTC time>`, and a fresh one is
started, with a warning that names both files and how to salvage what the old one held.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

log = logging.getLogger(__name__)


def open_db(path: str, schema: str, *, what: str = "database") -> sqlite3.Connection:
    """Open (or create, with `schema`) the database at `path`, or `:memory:`. One connection shared by the
    threads of a process, which serialise their own transactions; autocommit, so each caller's `BEGIN`
    is its own. A file gets WAL so another process (the CLI) reads while this one writes. A damaged file
    is set aside (see above) and a fresh one opened; `what` names it in the warning."""
    if path == ":memory:":
        return _connect(path, schema)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        return _connect(path, schema, check=True)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "disk is full" in str(exc)):
            raise  # not damage: another process holds it, or the disk is full
        aside = set_aside(Path(path))
        log.warning(
            "%s %s is damaged (%s): set aside as %s and a fresh one started. To salvage what it held: "
            "sqlite3 %s .recover | sqlite3 %s",
            what,
            path,
            exc,
            aside.name,
            aside,
            path + ".recovered",
        )
        return _connect(path, schema)


def _connect(path: str, schema: str, *, check: bool = False) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        if path != ":memory:":
            db.execute("PRAGMA journal_mode=WAL")
        if check and (problem := db.execute("PRAGMA quick_check").fetchone()[0]) != "ok":
            raise sqlite3.DatabaseError(f"quick_check: {problem}")
        db.executescript(schema)
    except BaseException:
        db.close()
        raise
    return db


def set_aside(path: Path) -> Path:
    """Move a damaged file (and its WAL side files) out of the way, keeping it; returns where it went."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    path.rename(aside)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(aside.with_name(aside.name + suffix))
    return aside
