"""The background side of the service: look up each claimed job, then deliver it to every target.

One thread does the lookups (alerts that read the same after cleaning are looked up once), and each
target has its own thread and its own queue in the outbox, so a slow or rate-limited target never holds
up another. A failed attempt is retried with capped exponential backoff (or after the wait the target
asked for, capped) until the delivery's deadline; it survives restarts because the outbox is on disk.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..answer.render import Answer
from ..answer.retrieve import Lookup
from ..domain.alert import Alert
from ..domain.distill import distill_alert
from ..jobs import Job, short_key
from ..targets import DeliveryError, Target
from .answer_log import said
from .free_space import Room, cannot_write
from .outbox import Delivery, Outbox

log = logging.getLogger(__name__)

LOOKUP_RETRY = 30.0  # seconds before a job whose lookup failed (store unavailable) is tried again
# The outbox keeps what was delivered this long (a week of `deliveries` to look back on), what failed a
# month, and is compacted about hourly.
KEEP_DONE, KEEP_FAILED, COMPACT_EVERY = 7 * 86400.0, 30 * 86400.0, 3600.0
# Jobs of up to this many alerts are looked up by their own thread: a page is never queued behind a
# large Alertmanager group's lookups.
SMALL_JOB = 10


@dataclass(frozen=True)
class RetryPolicy:
    backoff: float = 1.0  # first retry after this many seconds, doubled each time ...
    backoff_cap: float = 300.0  # ... up to this
    deadline: float = 3600.0  # a delivery still failing this long after its claim is given up
    max_retries: int | None = None  # and, when set, after this many retries

    def delay(self, attempts: int) -> float:
        return min(self.backoff_cap, self.backoff * 2 ** (attempts - 1))


class Dispatcher:
    def __init__(
        self,
        outbox: Outbox,
        lookup: Callable[[Alert], Lookup],
        targets: list[Target],
        policy: RetryPolicy,
        *,
        outcome: Callable[[str, str], None] = lambda target, outcome: None,
        room: Room | None = None,
        refine: Callable[[Job], Job] | None = None,
        read: Callable[[Job], Job] | None = None,
        nowhere_hint: str = "no target is configured",
    ):
        self._outbox = outbox
        self._outcome = outcome  # told (target, "delivered" | "retried" | "failed") after each attempt
        self._room = room  # told when a claim was written (the data dir has room again)
        self._lookup = lookup
        self._nowhere_hint = nowhere_hint  # what to set, said when an alert will be posted nowhere
        self._refine = refine  # a job's alerts read further before the lookup (a pager's custom details)
        self._read = read  # a job's unread alerts read by the webhook that claimed them (`Job.unread`)
        self._targets = targets
        self._policy = policy
        self._wake = threading.Condition()
        self._stopping = False
        self._threads: list[threading.Thread] = []
        self._compacted = 0.0
        self._warned_nowhere = -1e9

    # -- the webhook side ------------------------------------------------------------------------

    def submit(self, jobs: list[Job]) -> tuple[int, int]:
        """Claim the jobs (one transaction) for every target that takes them. Returns (accepted, duplicates)."""
        targets_of = {job.key: [t.name for t in self._targets if t.accepts(job)] for job in jobs}
        posting = [t for t in self._targets if t.keeps is None]  # the answer log keeps, it does not post
        nowhere = [job for job in jobs if job.kind == "lookup" and not any(t.accepts(job) for t in posting)]
        if nowhere and time.monotonic() - self._warned_nowhere > 60:  # at most a line a minute
            self._warned_nowhere = time.monotonic()
            log.warning(
                "%d alert(s) accepted that will be posted nowhere, only kept in the answer log (/answers) (e.g. %s): %s",
                len(nowhere),
                short_key(nowhere[0].key),
                self._nowhere_hint,
            )
        recorded, duplicates = self._outbox.claim(jobs, targets_of, deadline=self._policy.deadline)
        if self._room is not None:
            self._room.wrote()
        self.wake()
        return len(recorded), duplicates

    def wake(self) -> None:
        with self._wake:
            self._wake.notify_all()

    # -- running -----------------------------------------------------------------------------------

    def start(self) -> None:
        if recovered := self._outbox.recover():
            log.warning(
                "%d deliveries were in flight at the last stop: retrying, reading back where possible", recovered
            )
        loops = [
            ("lookups", lambda: self._lookups((1, SMALL_JOB))),
            ("lookups-large", lambda: self._lookups((SMALL_JOB + 1, 1 << 30))),
        ]
        loops += [(f"deliver-{t.name}", partial(self._deliveries, t)) for t in self._targets]
        for name, loop in loops:
            thread = threading.Thread(target=self._guarded(loop), name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 30.0) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        for thread in self._threads:
            thread.join(timeout)

    def join(self, timeout: float = 30.0) -> bool:
        """Wait until nothing is waiting for a lookup, due or in flight (for tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        while not self._outbox.idle():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def _sleep(self, until: float | None) -> None:
        with self._wake:
            if not self._stopping:
                self._wake.wait(timeout=max(0.01, min(1.0, (until or time.time() + 1.0) - time.time())))

    def _guarded(self, loop: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            while not self._stopping:
                try:
                    loop()
                except Exception as exc:  # one bad job or a broken disk must not kill the thread
                    if why := cannot_write(exc):
                        if self._room is not None:
                            self._room.refused(why)  # logged there, once a minute
                        time.sleep(5.0)
                        continue
                    log.exception("delivery loop failed; continuing")
                    time.sleep(1.0)

        return run

    # -- lookups -----------------------------------------------------------------------------------

    def _lookups(self, sizes: tuple[int, int]) -> None:
        jobs = self._outbox.awaiting_lookup(sizes=sizes)
        if not jobs:
            self._compact()
            self._sleep(self._outbox.next_lookup_due())
            return
        for job in jobs:
            try:
                if job.unread:  # a large group, claimed before it was read: read once, and kept so
                    job = self.read(job)
                    self._outbox.keep(job)
                answers = self.answers(job) if job.kind == "lookup" else []
            except Exception as exc:  # the store is down: the job waits, nothing is lost
                log.error("%s: lookup failed (%s); trying again in %.0fs", short_key(job.key), exc, LOOKUP_RETRY)
                self._outbox.lookup_failed(job.key, str(exc), time.time() + LOOKUP_RETRY)
                continue
            self._outbox.rendered(job.key, {t.name: t.render(job, answers) for t in self._targets if t.accepts(job)})
            if job.kind == "lookup":
                for answer in answers[:3]:  # a storm's group: its first few, the answer log keeps fifty
                    log.info("answered %s %s", short_key(job.key), said(answer))
        self.wake()

    def _compact(self) -> None:
        now = time.time()
        if now - self._compacted < COMPACT_EVERY:
            return
        self._compacted = now
        if removed := self._outbox.compact(done_before=now - KEEP_DONE, failed_before=now - KEEP_FAILED):
            log.info("outbox: forgot %d deliveries done over a week ago (or failed over a month ago)", removed)

    def read(self, job: Job) -> Job:
        """The job with its unread alerts read, by the webhook that claimed them; as it is when none is left."""
        return self._read(job) if job.unread and self._read is not None else job

    def answers(self, job: Job) -> list[Answer]:
        """One lookup per distinct alert: a thousand pods crash looping read the same once cleaned."""
        groups: dict[tuple, list] = {}
        for item in (self._refine(job) if self._refine else job).items:
            a = item.alert
            key = (distill_alert(a.text), a.service, a.env, a.flavor, tuple(a.component_tags), a.signature)
            groups.setdefault(key, []).append(item)
        return [
            Answer(
                items[0].title,
                len(items),
                self._lookup(items[0].alert),
                items[0].detail,
                items[0].runbook,
                items[0].rule,
            )
            for items in groups.values()
        ]

    # -- deliveries --------------------------------------------------------------------------------

    def _deliveries(self, target: Target) -> None:
        delivery = self._outbox.take(target.name)
        if delivery is None:
            self._sleep(self._outbox.next_due(target.name))
            return
        self._deliver(target, delivery)

    def _deliver(self, target: Target, d: Delivery) -> None:
        try:
            if d.ambiguous and target.already_delivered(d.job):
                log.info(
                    "%s: already on %s (read back after an uncertain attempt): not posting again",
                    short_key(d.job.key),
                    target.name,
                )
            else:
                target.send(d.job, d.body)
        except DeliveryError as exc:
            self._failed(d, exc)
            return
        except Exception as exc:  # a bug or a surprise in the target: an attempt that may have posted, retried
            log.exception("%s: %s raised %s", short_key(d.job.key), target.name, type(exc).__name__)
            self._failed(d, DeliveryError(f"unexpected {type(exc).__name__}: {exc}"[:500], retry=True, ambiguous=True))
            return
        self._outbox.delivered(d)
        self._outcome(target.name, "delivered")
        log.info("%s: delivered to %s", short_key(d.job.key), target.name)

    @staticmethod
    def gives_up(policy: RetryPolicy, *, attempts: int, next_at: float, deadline: float) -> bool:
        """Is a retry due at `next_at` one too many: past the delivery's deadline, or past `max_retries`?"""
        return next_at > deadline or policy.max_retries is not None and attempts > policy.max_retries

    def _failed(self, d: Delivery, exc: DeliveryError) -> None:
        policy = self._policy
        at = time.time() + (exc.wait if exc.wait is not None else policy.delay(d.attempts))
        if not exc.retry or self.gives_up(policy, attempts=d.attempts, next_at=at, deadline=d.deadline):
            why = "refused" if not exc.retry else "gave up"
            log.error("%s: %s %s after %d attempt(s): %s", short_key(d.job.key), why, d.target, d.attempts, exc)
            self._outbox.give_up(d, str(exc))
            self._outcome(d.target, "failed")
            return
        log.warning(
            "%s: %s failed (%s), attempt %d; next in %.1fs",
            short_key(d.job.key),
            d.target,
            exc,
            d.attempts,
            at - time.time(),
        )
        self._outbox.retry(d, at=at, error=str(exc), ambiguous=exc.ambiguous)
        self._outcome(d.target, "retried")
