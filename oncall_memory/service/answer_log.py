"""What every alert was answered, kept whether or not any target is set (issue 84): when it came, from which
pager, its headline, the first answers with how sure each was, and where the answer was posted. A team
trying the service without Slack or PagerDuty sees it on the page, through `oncall-memory answers` and at
`/answers`; the same records make the coverage report (`coverage`): the alert families seen whose answers
read "nothing close", the runbooks to write next.

`<data dir>/answers.sqlite3`, bounded: the last `keep` answers, and the last `MAX_FAMILIES` families seen.
Everything in it was redacted where the alert entered (the outbox's job).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..answer.render import Answer
from ..jobs import Job
from ..store.sqlite_file import open_db
from ..targets import DeliveryError, Target

MAX_FAMILIES = 10_000
FIRST = 3  # answers kept per alert


@dataclass(frozen=True)
class Neighbour:
    id: str
    title: str
    confidence: str
    score: float


@dataclass(frozen=True)
class Answered:
    """One alert (or several that read the same) and what the memory answered."""

    at: float
    pager: str  # the integration whose webhook brought it ("alertmanager", "pagerduty")
    job: str  # the job's key (its deliveries are under it)
    headline: str
    family: str  # the alert's rule (Alertmanager's alertname), else its canonical signature
    count: int  # alerts that read the same, answered once
    confidence: str  # of the first answer: high, medium, low ("nothing close is on record")
    first: list[Neighbour] = field(default_factory=list)
    posted_to: list[str] = field(default_factory=list)  # the targets the answer went to

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Answered:
        first = [Neighbour(**n) for n in data.get("first", [])]
        return cls(**{**data, "first": first})


@dataclass(frozen=True)
class Family:
    """An alert family seen, and how its answers read."""

    family: str
    headline: str  # its latest alert's
    seen: int  # alerts
    low: int  # of its answers, how many read "nothing close"
    first_seen: float
    last_seen: float
    last_confidence: str
    written: float | None  # when someone said a runbook or an incident for it was written


_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, family TEXT NOT NULL, entry TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS answers_at ON answers (at);
CREATE TABLE IF NOT EXISTS families (
    family TEXT PRIMARY KEY, headline TEXT NOT NULL, seen INTEGER NOT NULL, low INTEGER NOT NULL,
    first_seen REAL NOT NULL, last_seen REAL NOT NULL, last_confidence TEXT NOT NULL, written REAL);
CREATE INDEX IF NOT EXISTS families_seen ON families (last_seen);
"""


class AnswerLog:
    """The answers and the families, in one SQLite file (`:memory:` for a memory that lives in memory)."""

    def __init__(self, path: str, keep: int = 1000):
        self._keep = max(1, keep)
        self._lock = threading.Lock()
        self._db = open_db(path, _SCHEMA, what="the answer log")

    # -- writing ------------------------------------------------------------------------------------

    def record(self, answered: list[Answered]) -> None:
        """Keep these answers (a job's) and fold them into their families, in one transaction."""
        if not answered:
            return
        with self._lock, _transaction(self._db):
            self._db.executemany(
                "INSERT INTO answers (at, family, entry) VALUES (?, ?, ?)",
                [(a.at, a.family, json.dumps(a.as_json())) for a in answered],
            )
            for a in answered:
                low = int(a.confidence == "low")
                self._db.execute(
                    "INSERT INTO families (family, headline, seen, low, first_seen, last_seen, last_confidence) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (family) DO UPDATE SET headline=excluded.headline, "
                    "seen=seen+excluded.seen, low=low+excluded.low, last_seen=excluded.last_seen, "
                    "last_confidence=excluded.last_confidence",
                    (a.family, a.headline, a.count, low, a.at, a.at, a.confidence),
                )
            self._db.execute(
                "DELETE FROM answers WHERE id <= (SELECT MAX(id) FROM answers) - ?", (self._keep,)
            )  # the last `keep`, whatever the clock says
            self._db.execute(
                "DELETE FROM families WHERE family NOT IN "
                "(SELECT family FROM families ORDER BY last_seen DESC LIMIT ?)",
                (MAX_FAMILIES,),
            )

    def mark_written(self, family: str, at: float | None = None) -> bool:
        """Someone wrote the runbook or the incident for `family`: it stays listed, marked, until its answers
        stop reading low. False when no such family was seen."""
        with self._lock:
            cursor = self._db.execute(
                "UPDATE families SET written=? WHERE family=?", (time.time() if at is None else at, family)
            )
        return cursor.rowcount > 0

    # -- reading ------------------------------------------------------------------------------------

    def recent(self, since: float | None = None, limit: int = 100) -> list[Answered]:
        """The latest answers, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT entry FROM answers WHERE at >= ? ORDER BY id DESC LIMIT ?", (since or 0.0, limit)
            ).fetchall()
        return [Answered.from_json(json.loads(r[0])) for r in rows]

    def uncovered(self, since: float | None = None) -> list[Family]:
        """The families seen since `since` whose latest answer read "nothing close", most often seen first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT family, headline, seen, low, first_seen, last_seen, last_confidence, written FROM families "
                "WHERE last_seen >= ? AND last_confidence = 'low' ORDER BY low DESC, last_seen DESC",
                (since or 0.0,),
            ).fetchall()
        return [Family(*r) for r in rows]

    def count_uncovered(self, since: float) -> int:
        with self._lock:
            (n,) = self._db.execute(
                "SELECT COUNT(*) FROM families WHERE last_seen >= ? AND last_confidence = 'low'", (since,)
            ).fetchone()
        return int(n)

    def close(self) -> None:
        with self._lock:
            self._db.close()


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def read_only(path: Path) -> AnswerLog | None:
    """The answer log a service kept, for a command run without one; None when no service ever kept one."""
    return AnswerLog(str(path)) if path.exists() else None


def family_of(rule: str | None, signature: str | None, headline: str) -> str:
    """An alert's family: its rule's name, else its canonical signature, else its headline."""
    return (rule or signature or headline).strip()[:200] or "unnamed"


def rows(answered: list[Answered]) -> list[dict[str, Any]]:
    return [a.as_json() for a in answered]


def family_rows(families: list[Family]) -> list[dict[str, Any]]:
    return [asdict(f) for f in families]


class AnswerBook(Target):
    """The answer log as a delivery target the service always has: every lookup job is recorded, so a job is
    looked up and kept even where no target posts it, through the outbox's exactly-once claims."""

    name = "answers"
    keeps = "every alert and what it was answered (/answers, `oncall-memory answers`, the page)"

    def __init__(self, book: AnswerLog, posted_to: Callable[[Job], list[str]] = lambda job: []):
        self._book = book
        self.posted_to = posted_to  # the other targets a job goes to (set once they are built)

    def describe(self) -> str:
        return "the answer log"

    def accepts(self, job: Job) -> bool:
        return job.kind == "lookup"

    def render(self, job: Job, answers: list[Answer]) -> dict[str, Any]:
        now, pager, posted = time.time(), job.key.split(":", 1)[0], self.posted_to(job)
        return {"answered": [answered(now, pager, job.key, a, posted).as_json() for a in answers[:MAX_PER_JOB]]}

    def send(self, job: Job, body: dict[str, Any]) -> None:
        try:
            self._book.record([Answered.from_json(e) for e in body.get("answered", [])])
        except sqlite3.OperationalError as exc:  # the disk is full or locked: tried again, as any target is
            raise DeliveryError(f"answer log: {exc}", retry=True) from exc


MAX_PER_JOB = 50  # distinct alerts of one job recorded (a storm's group keeps its first fifty)


def answered(at: float, pager: str, job: str, answer: Answer, posted: list[str]) -> Answered:
    lookup = answer.lookup
    first = [Neighbour(n.id, n.title[:200], n.confidence, round(n.score, 4)) for n in lookup.neighbours[:FIRST]]
    return Answered(
        at=at,
        pager=pager,
        job=job,
        headline=answer.title[:300],
        family=family_of(answer.rule, lookup.signature_key, answer.title),
        count=answer.count,
        confidence=lookup.confidence if lookup.neighbours else "low",
        first=first,
        posted_to=posted,
    )


def said(answer: Answer) -> str:
    """An answer in a log line: the alert, its first incidents and how sure each is."""
    lookup = answer.lookup
    first = ", ".join(f"{n.id} ({n.confidence})" for n in lookup.neighbours[:FIRST]) or "nothing on record"
    weak = "; nothing close is on record" if lookup.neighbours and lookup.confidence == "low" else ""
    return f"{answer.title[:80]!r} -> {first}{weak}"
