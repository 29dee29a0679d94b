"""The first service's ledger (`<data dir>/enrich.sqlite3`), carried into the outbox once.

Before the outbox, the service kept its jobs in a ledger: one job per alert (`key`, `alert`, `title`,
`pagerduty_incident`), a status (pending, done, failed) and the targets that had taken it. On the first
start after the upgrade its jobs move into the outbox: every alert is claimed (so a redelivery is still a
duplicate), and a job that was pending or failed gets a delivery for each target that had not taken it
yet. The ledger is then renamed `enrich.sqlite3.migrated`, kept, and never read again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

from ..domain.alert import Alert
from ..jobs import Job
from ..redact import already_redacted
from .outbox import Outbox

log = logging.getLogger(__name__)


def migrate_ledger(
    path: Path | None, outbox: Outbox, targets_for: Callable[[Job], list[str]], *, deadline: float
) -> int:
    """Move the ledger at `path` (if there is one) into `outbox`. Returns the jobs that will be delivered."""
    if path is None or not path.exists():
        return 0
    db = sqlite3.connect(path)
    try:
        jobs = db.execute("SELECT key, job, status FROM jobs").fetchall()
        taken = {(k, t) for k, t in db.execute("SELECT key, target FROM deliveries").fetchall()}
    except sqlite3.DatabaseError as exc:
        log.warning("the old ledger %s could not be read (%s): left as it is, its jobs are not carried over", path, exc)
        return 0
    finally:
        db.close()
    to_deliver = 0
    for key, raw, status in jobs:
        try:
            old = json.loads(raw)
            with already_redacted():  # the ledger held redacted jobs
                job = Job.single(old["key"], Alert.model_validate(old["alert"]), old["title"], record=_record(old))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("old ledger job %s skipped: %s", key, exc)
            continue
        targets = [] if status == "done" else [t for t in targets_for(job) if (key, t) not in taken]
        recorded, _ = outbox.claim([job], {job.key: targets}, deadline=deadline)
        to_deliver += bool(recorded and targets)
    path.rename(path.with_name(path.name + ".migrated"))
    log.warning(
        "carried %d jobs of the old ledger %s into the outbox (%d to deliver); it is kept as %s.migrated",
        len(jobs),
        path,
        to_deliver,
        path.name,
    )
    return to_deliver


def _record(old: dict) -> str | None:
    """The incident an old ledger's job named, in the field of its pager's (`<pager>_incident`)."""
    return next((v for k, v in old.items() if k.endswith("_incident") and isinstance(v, str)), None)
