"""Claiming alerts: a webhook's post claims its alerts in one transaction, so a redelivered alert is a
duplicate (also after a restart), and records one delivery per target for each job it keeps."""

from __future__ import annotations

import hashlib
import time

from ..jobs import Job
from .outbox_file import FAILED, NEW, PENDING, OutboxFile, _chunks, _storable


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


class Claims(OutboxFile):
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
