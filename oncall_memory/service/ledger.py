"""What was posted, kept in the data dir so a redelivered webhook never posts twice, even after a restart.

A job is claimed when its webhook arrives (pending). Each target (PagerDuty note, Slack message) is
recorded once it took the message, and a job is done when every target did. A job that failed for
good is marked failed: the pager's own redelivery may claim it again, and only the targets that did
not get it are tried. Pending jobs survive a restart and are picked up again on start.
"""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone
from pathlib import Path

from .inbound import Job

PENDING, DONE, FAILED = "pending", "done", "failed"


class Ledger:
    def __init__(self, path: Path | str):
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        self._db.executescript(
            "CREATE TABLE IF NOT EXISTS jobs (key TEXT PRIMARY KEY, job TEXT NOT NULL, status TEXT NOT NULL,"
            " updated_at TEXT NOT NULL, detail TEXT);"
            "CREATE TABLE IF NOT EXISTS deliveries (key TEXT NOT NULL, target TEXT NOT NULL, at TEXT NOT NULL,"
            " PRIMARY KEY (key, target));"
        )

    def claim(self, job: Job) -> bool:
        """Record a job as pending. False if this alert is already pending or done."""
        with self._lock:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO jobs (key, job, status, updated_at) VALUES (?, ?, ?, ?)",
                (job.key, job.model_dump_json(), PENDING, _now()),
            )
            if cur.rowcount == 1:
                return True
            cur = self._db.execute(
                "UPDATE jobs SET status=?, updated_at=? WHERE key=? AND status=?", (PENDING, _now(), job.key, FAILED)
            )
            return cur.rowcount == 1

    def delivered(self, key: str, target: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM deliveries WHERE key=? AND target=?", (key, target)).fetchone() is not None

    def deliver(self, key: str, target: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO deliveries (key, target, at) VALUES (?, ?, ?)", (key, target, _now()))

    def finish(self, key: str, *, ok: bool, detail: str = "") -> None:
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET status=?, updated_at=?, detail=? WHERE key=?", (DONE if ok else FAILED, _now(), detail, key)
            )

    def status(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT status FROM jobs WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def pending(self) -> list[Job]:
        with self._lock:
            rows = self._db.execute("SELECT job FROM jobs WHERE status=? ORDER BY updated_at", (PENDING,)).fetchall()
        return [Job.model_validate_json(r[0]) for r in rows]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()
