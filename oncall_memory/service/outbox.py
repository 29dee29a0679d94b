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

from typing import Any

from ..jobs import Job
from .claims import Claims, group_key
from .delivery_queue import DeliveryQueue
from .outbox_file import (
    CHUNK,
    DONE,
    FAILED,
    NEW,
    PENDING,
    SENDING,
    Delivery,
    TargetHealth,
    _stored_job,
)

__all__ = [
    "CHUNK",
    "DONE",
    "FAILED",
    "NEW",
    "PENDING",
    "SENDING",
    "Delivery",
    "Outbox",
    "TargetHealth",
    "group_key",
]


class Outbox(Claims, DeliveryQueue):
    """The outbox: claiming (`Claims`), the queue of lookups and deliveries (`DeliveryQueue`), and here, what is
    there and forgetting what is old."""

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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

    # -- what is there

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
