"""The outbox: every alert claimed, every note and message to deliver, kept in the data dir so nothing
is lost to an outage, a slow target or a restart.

A webhook claims its alerts in one transaction (a redelivered alert is a duplicate, also after a
restart) and records one delivery per target. A delivery is `new` until its lookup is done and its
message rendered (the message is fixed then, so every retry posts the same words), then `pending` until
due, `sending` while in flight, and ends `done` or `failed` (refused, or still failing at its deadline).
A delivery found `sending` at start-up was interrupted in flight: it is retried, marked `ambiguous` so a
target that can read back (PagerDuty notes) checks before posting again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
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


def group_key(base: str, alert_keys: list[str]) -> str:
    """The key of a job made of these newly claimed alerts (an Alertmanager group's new firing alerts)."""
    digest = hashlib.sha256("\n".join([base, *sorted(alert_keys)]).encode()).hexdigest()[:16]
    return f"{base}#{digest}"


def _first(key: str, taken: set[str]) -> bool:
    """Is this the alert's first claim (not before, nor earlier in the same post)? It is taken if so."""
    if key in taken:
        return False
    taken.add(key)
    return True


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


class Outbox:
    def __init__(self, path: Path | str):
        self.path = str(path)
        self._db = open_db(self.path, _SCHEMA, what="the outbox")  # WAL: the CLI reads while the service writes
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- claiming -------------------------------------------------------------------------------

    def claim(self, jobs: list[Job], targets_of: dict[str, list[str]], *, deadline: float) -> tuple[list[Job], int]:
        """Claim every job's alerts in one transaction. A job keeps only alerts never claimed before and is
        recorded with a delivery per target in `targets_of[job.key]`; a job left with no alert is a
        duplicate. A duplicate whose delivery failed for good is revived (the pager's redelivery is a retry).
        Returns the jobs recorded and the number of duplicates."""
        now = time.time()
        recorded, duplicates = [], 0
        with self._lock, self._transaction():
            for job in jobs:
                targets = targets_of.get(job.key, [])
                keys = job.alert_keys
                # One read of which alerts were claimed before, then one write of the rest under the job's
                # final key: a storm's 10,000 alerts took 10,000 statements to claim and as many to rename.
                taken = self._claimed(keys)
                fresh = [i for i in job.items if _first(i.key, taken)]  # an alert twice in one post: claimed once
                unread = {k: alert for k, alert in job.unread.items() if _first(k, taken)}
                fresh_keys = [i.key for i in fresh] + list(unread)
                if not fresh_keys:
                    duplicates += 1
                    self._revive(keys, now, deadline)
                    continue
                if keys != [job.key]:  # a group: its key names the alerts it now holds
                    job = job.model_copy(
                        update={"items": fresh, "unread": unread, "key": group_key(job.key, fresh_keys)}
                    )
                self._db.executemany(
                    "INSERT OR IGNORE INTO claims (alert, job) VALUES (?, ?)", [(k, job.key) for k in fresh_keys]
                )
                self._db.execute(
                    "INSERT OR REPLACE INTO jobs (key, job, created_at, size) VALUES (?, ?, ?, ?)",
                    (job.key, _storable(job), now, len(fresh_keys)),
                )
                self._db.executemany(
                    "INSERT OR IGNORE INTO deliveries (job, target, state, next_at, deadline, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(job.key, target, NEW, now, now + deadline, now) for target in targets],
                )
                recorded.append(job)
        return recorded, duplicates

    def keep(self, job: Job) -> None:
        """The job as its webhook read it (its unread alerts now items), stored in place of the one claimed:
        its deliveries, and anyone who asks for it later, get what was looked up."""
        stored = _storable(job)  # compressed before the lock: a storm's is 10,000 items
        with self._lock:
            self._db.execute("UPDATE jobs SET job=? WHERE key=?", (stored, job.key))

    def _claimed(self, alert_keys: list[str]) -> set[str]:
        """Which of these alerts were claimed before."""
        found: set[str] = set()
        for part in _chunks(alert_keys):
            marks = ",".join("?" * len(part))
            found.update(r[0] for r in self._db.execute(f"SELECT alert FROM claims WHERE alert IN ({marks})", part))
        return found

    def _revive(self, alert_keys: list[str], now: float, deadline: float) -> None:
        for part in _chunks(alert_keys):
            marks = ",".join("?" * len(part))
            self._db.execute(
                f"UPDATE deliveries SET state=CASE WHEN body IS NULL THEN '{NEW}' ELSE '{PENDING}' END, "
                f"attempts=0, next_at=?, deadline=?, updated_at=? WHERE state='{FAILED}' AND job IN "
                f"(SELECT job FROM claims WHERE alert IN ({marks}))",
                (now, now + deadline, now, *part),
            )

    # -- the lookup step ------------------------------------------------------------------------

    def awaiting_lookup(self, *, sizes: tuple[int, int] = (1, 1 << 30), limit: int = 20) -> list[Job]:
        """Jobs due for their lookup holding between `sizes` alerts, oldest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT DISTINCT j.job, j.created_at FROM jobs j JOIN deliveries d ON d.job = j.key "
                f"WHERE d.state='{NEW}' AND d.next_at <= ? AND j.size BETWEEN ? AND ? ORDER BY j.created_at LIMIT ?",
                (time.time(), *sizes, limit),
            ).fetchall()
        return [_stored_job(r[0]) for r in rows]

    def rendered(self, job_key: str, bodies: dict[str, dict[str, Any]]) -> None:
        """The job's lookup is done: fix each target's message and make it due now."""
        now = time.time()
        with self._lock, self._transaction():
            self._db.executemany(
                f"UPDATE deliveries SET state='{PENDING}', body=?, next_at=?, updated_at=? WHERE job=? AND target=? "
                f"AND state='{NEW}'",
                [(json.dumps(body), now, now, job_key, target) for target, body in bodies.items()],
            )

    def lookup_failed(self, job_key: str, error: str, retry_at: float) -> None:
        with self._lock:
            self._db.execute(
                f"UPDATE deliveries SET next_at=?, last_error=?, updated_at=? WHERE job=? AND state='{NEW}'",
                (retry_at, f"lookup: {error}", time.time(), job_key),
            )

    # -- delivering -----------------------------------------------------------------------------

    def take(self, target: str) -> Delivery | None:
        """The next due delivery for `target`, marked in flight (its attempt counted), or None."""
        now = time.time()
        with self._lock:
            row = self._db.execute(
                f"UPDATE deliveries SET state='{SENDING}', attempts=attempts+1, updated_at=? WHERE rowid = ("
                f"SELECT rowid FROM deliveries WHERE target=? AND state='{PENDING}' AND next_at <= ? "
                f"ORDER BY next_at LIMIT 1) RETURNING job, attempts, deadline, ambiguous, body",
                (now, target, now),
            ).fetchone()
            if row is None:
                return None
            job = self._db.execute("SELECT job FROM jobs WHERE key=?", (row[0],)).fetchone()
        return Delivery(_stored_job(job[0]), target, row[1], row[2], bool(row[3]), json.loads(row[4]))

    def next_due(self, target: str) -> float | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT MIN(next_at) FROM deliveries WHERE target=? AND state='{PENDING}'", (target,)
            ).fetchone()
        return row[0]

    def next_lookup_due(self) -> float | None:
        with self._lock:
            return self._db.execute(f"SELECT MIN(next_at) FROM deliveries WHERE state='{NEW}'").fetchone()[0]

    def delivered(self, d: Delivery) -> None:
        now = time.time()
        with self._lock, self._transaction():
            self._db.execute(
                f"UPDATE deliveries SET state='{DONE}', last_error=NULL, updated_at=? WHERE job=? AND target=?",
                (now, d.job.key, d.target),
            )
            self._db.execute(
                "INSERT INTO targets (name, failing_since, last_error, last_ok) VALUES (?, NULL, NULL, ?) "
                "ON CONFLICT(name) DO UPDATE SET failing_since=NULL, last_error=NULL, last_ok=?",
                (d.target, now, now),
            )

    def retry(self, d: Delivery, *, at: float, error: str, ambiguous: bool) -> None:
        self._failed(d, PENDING, error, at=at, ambiguous=ambiguous)

    def give_up(self, d: Delivery, error: str) -> None:
        self._failed(d, FAILED, error, at=time.time(), ambiguous=d.ambiguous)

    def _failed(self, d: Delivery, state: str, error: str, *, at: float, ambiguous: bool) -> None:
        now = time.time()
        with self._lock, self._transaction():
            self._db.execute(
                "UPDATE deliveries SET state=?, next_at=?, last_error=?, ambiguous=?, updated_at=? WHERE job=? AND target=?",
                (state, at, error, int(ambiguous or d.ambiguous), now, d.job.key, d.target),
            )
            self._db.execute(
                "INSERT INTO targets (name, failing_since, last_error) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET failing_since=COALESCE(failing_since, ?), last_error=?",
                (d.target, now, error, now, error),
            )

    def recover(self) -> int:
        """At start-up: deliveries left in flight by a crash are due again, and may have arrived."""
        with self._lock:
            return self._db.execute(
                f"UPDATE deliveries SET state='{PENDING}', ambiguous=1, next_at=? WHERE state='{SENDING}'",
                (time.time(),),
            ).rowcount

    def compact(self, *, done_before: float, failed_before: float) -> int:
        """Forget deliveries done before `done_before` and failed before `failed_before`, the jobs left with
        none, and those jobs' claims (a pager redelivers within hours, not days: an alert claimed that long
        ago and sent again is new). Returns the deliveries removed."""
        with self._lock, self._transaction():
            removed = self._db.execute(
                f"DELETE FROM deliveries WHERE (state='{DONE}' AND updated_at < ?) OR (state='{FAILED}' AND updated_at < ?)",
                (done_before, failed_before),
            ).rowcount
            self._db.execute(
                "DELETE FROM jobs WHERE key NOT IN (SELECT DISTINCT job FROM deliveries) AND created_at < ?",
                (done_before,),
            )
            self._db.execute("DELETE FROM claims WHERE job NOT IN (SELECT key FROM jobs)")
        return removed

    # -- what is there --------------------------------------------------------------------------

    def idle(self) -> bool:
        """Nothing is waiting for a lookup, due, or in flight."""
        with self._lock:
            return (
                self._db.execute(
                    f"SELECT 1 FROM deliveries WHERE state IN ('{NEW}', '{PENDING}', '{SENDING}') LIMIT 1"
                ).fetchone()
                is None
            )

    def depth(self) -> dict[tuple[str, str], int]:
        """How many deliveries each target has in each state that is not done."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT target, state, COUNT(*) FROM deliveries WHERE state != '{DONE}' GROUP BY target, state"
            ).fetchall()
        return {(target, state): n for target, state, n in rows}

    def health(self) -> list[TargetHealth]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT t.name, t.failing_since, t.last_error, (SELECT COUNT(*) FROM deliveries d WHERE d.target=t.name "
                f"AND d.state IN ('{NEW}', '{PENDING}', '{SENDING}')) FROM targets t"
            ).fetchall()
        return [TargetHealth(*r) for r in rows]

    def deliveries(self, *, failed_only: bool = False) -> list[dict[str, Any]]:
        """Every delivery, newest first: job, target, state, attempts, last error, next attempt, updated."""
        where = f"WHERE state='{FAILED}'" if failed_only else ""
        with self._lock:
            rows = self._db.execute(
                f"SELECT job, target, state, attempts, last_error, next_at, updated_at, deadline FROM deliveries {where} "
                "ORDER BY updated_at DESC"
            ).fetchall()
        keys = ("job", "target", "state", "attempts", "last_error", "next_at", "updated_at", "deadline")
        return [dict(zip(keys, r)) for r in rows]

    def job_of(self, alert_key: str) -> Job | None:
        """The job that claimed this alert (e.g. "pagerduty:PGR0VU2"), if any."""
        with self._lock:
            row = self._db.execute(
                "SELECT j.job FROM claims c JOIN jobs j ON j.key = c.job WHERE c.alert=?", (alert_key,)
            ).fetchone()
        return _stored_job(row[0]) if row else None

    def states(self, job_key: str) -> dict[str, str]:
        """Each target's state for the job holding this alert (or job) key."""
        with self._lock:
            row = self._db.execute("SELECT job FROM claims WHERE alert=?", (job_key,)).fetchone()
            key = row[0] if row else job_key
            return dict(self._db.execute("SELECT target, state FROM deliveries WHERE job=?", (key,)).fetchall())

    def _transaction(self):
        return _Transaction(self._db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an error): a group of writes lands whole or not at all."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
