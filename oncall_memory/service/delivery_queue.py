"""The queue of deliveries: each job's lookup (`new` until its message is rendered and fixed), then each
target's attempts (`pending` until due, `sending` in flight, `done` or `failed`), and a target's health."""

from __future__ import annotations

import json
import time
from typing import Any

from ..jobs import Job
from .outbox_file import DONE, FAILED, NEW, PENDING, SENDING, Delivery, OutboxFile, _stored_job


class DeliveryQueue(OutboxFile):
    # -- the lookup step

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

    # -- delivering

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
