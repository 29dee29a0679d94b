"""Responders' feedback on suggestions: "INC-1042 helped", "INC-1042 not related".

Kept apart from the vector store (`<data dir>/feedback.sqlite3`), so it survives a reindex, a restore
and an engine migration. A verdict is about a suggestion *for alerts with the same canonical signature*:
it moves that suggestion for the next alert that reads the same, not for every alert.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from ..errors import InvalidInput
from ..redact import redact
from ..store.sqlite_file import open_db

log = logging.getLogger(__name__)

Verdict = Literal["helped", "not related"]
VERDICTS: tuple[Verdict, ...] = ("helped", "not related")


def unknown_incident(suggested: str) -> str:
    """Why feedback on an incident the memory does not hold is refused (the id redacted: it is input)."""
    return (
        f"no incident {redact(suggested)[:80]!r} in the memory: feedback is about an incident it suggested "
        "(the ids `similar` lists)"
    )


_SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    alert_key TEXT NOT NULL,      -- canonical signature of the alert the suggestion was made for
    suggested TEXT NOT NULL,      -- the incident id suggested
    verdict TEXT NOT NULL,
    who TEXT NOT NULL,
    at TEXT NOT NULL,
    ref TEXT,                     -- where it came from: a pager's note id, "api", "cli"
    UNIQUE (alert_key, suggested, who, ref));  -- one verdict per person and place: a changed mind replaces it
CREATE INDEX IF NOT EXISTS by_alert ON feedback (alert_key);
CREATE TABLE IF NOT EXISTS evidence (
    alert_key TEXT NOT NULL,
    suggested TEXT NOT NULL,
    evidence TEXT NOT NULL,       -- what said it was the same problem when it was offered (confidence.Evidence)
    at TEXT NOT NULL,
    PRIMARY KEY (alert_key, suggested));
CREATE TABLE IF NOT EXISTS offers (
    token TEXT PRIMARY KEY,       -- what a feedback button carries (a chat button's value, at most 2,000 characters)
    alert_key TEXT NOT NULL,
    suggested TEXT NOT NULL,
    at TEXT NOT NULL);
"""


@dataclass(frozen=True)
class Tally:
    helped: int = 0
    not_related: int = 0


class FeedbackStore:
    def __init__(self, path: Path | str):
        self.path = str(path)
        self._db = open_db(self.path, _SCHEMA, what="the feedback store")
        self._warned = False
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def record(
        self,
        alert_key: str,
        suggested: str,
        verdict: str,
        *,
        who: str,
        at: datetime | None = None,
        ref: str | None = None,
    ) -> bool:
        """Store one verdict. The same person's verdict from the same place counts once (a note read twice)
        and a later one replaces it (a changed mind). Returns False when nothing changed. Raises
        `InvalidInput` for an unknown verdict."""
        verdict = "not related" if verdict == "not-related" else verdict  # the CLI's spelling
        if verdict not in VERDICTS:
            raise InvalidInput(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
        # who and the suggestion come from a person or an agent: redacted as they enter
        suggested, who, ref = redact(suggested), redact(who), redact(ref) if ref else ref
        stamp = (at or datetime.now(timezone.utc)).isoformat()
        with self._lock:
            return bool(
                self._db.execute(
                    "INSERT INTO feedback (alert_key, suggested, verdict, who, at, ref) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (alert_key, suggested, who, ref) DO UPDATE SET verdict=excluded.verdict, at=excluded.at "
                    "WHERE verdict != excluded.verdict",
                    (alert_key, suggested, verdict, who, stamp, ref or ""),
                ).rowcount
            )

    def offer(self, alert_key: str, suggested: str) -> str:
        """A short token for "`suggested` was offered for this alert", for a feedback button to carry: an
        alert's key can be longer than a button's value may be. The same offer always gets the same token, so
        a message rendered twice carries the same buttons."""
        token = hashlib.sha256(f"{alert_key}\0{suggested}".encode()).hexdigest()[:32]
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO offers (token, alert_key, suggested, at) VALUES (?, ?, ?, ?)",
                (token, alert_key, suggested, datetime.now(timezone.utc).isoformat()),
            )
        return token

    def offered(self, token: str) -> tuple[str, str] | None:
        """The (alert key, suggested incident) a token stands for, or None."""
        with self._lock:
            row = self._db.execute("SELECT alert_key, suggested FROM offers WHERE token = ?", (token,)).fetchone()
        return (row[0], row[1]) if row else None

    def record_offered(self, token: str, verdict: str, *, who: str, ref: str) -> tuple[str, bool]:
        """Store a verdict given on an offer (a button pressed). Returns the suggested incident and whether
        anything changed. Raises `InvalidInput` for a token that was never offered."""
        offered = self.offered(token)
        if offered is None:
            raise InvalidInput("that suggestion is not on record (was the data dir reset?)")
        key, suggested = offered
        return suggested, self.record(key, suggested, verdict, who=who, ref=ref)

    def tallies(self, alert_key: str | None) -> dict[str, Tally]:
        """Per suggested incident id: how often it helped, how often it was marked not related, for alerts
        with this canonical signature."""
        if not alert_key:
            return {}
        try:
            with self._lock:
                rows = self._db.execute(
                    "SELECT suggested, SUM(verdict = 'helped'), SUM(verdict = 'not related') FROM feedback "
                    "WHERE alert_key = ? GROUP BY suggested",
                    (alert_key,),
                ).fetchall()
        except sqlite3.DatabaseError as exc:  # damaged after it was opened: feedback is a boost, lookups go on
            if not self._warned:
                log.warning(
                    "the feedback store %s cannot be read (%s): lookups go on without feedback. Stop the "
                    "service and move the file aside; it is set aside and started fresh at the next start",
                    self.path,
                    exc,
                )
                self._warned = True
            return {}
        return {suggested: Tally(helped, not_related) for suggested, helped, not_related in rows}

    def keep_evidence(self, alert_key: str, suggested: str, evidence: Sequence[float]) -> None:
        """What said `suggested` was the same problem as this alert when it was offered: with the verdict that
        follows, a labelled pair for refitting how sure answers are (confidence.recalibrate)."""
        with self._lock:
            self._db.execute(
                "INSERT INTO evidence (alert_key, suggested, evidence, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (alert_key, suggested) DO UPDATE SET evidence=excluded.evidence, at=excluded.at",
                (
                    alert_key,
                    suggested,
                    json.dumps([float(x) for x in evidence]),
                    datetime.now(timezone.utc).isoformat(),
                ),
            )

    def has_evidence(self, alert_key: str, suggested: str) -> bool:
        with self._lock:
            return bool(
                self._db.execute(
                    "SELECT 1 FROM evidence WHERE alert_key = ? AND suggested = ?", (alert_key, suggested)
                ).fetchone()
            )

    def labelled(self) -> list[tuple[list[float], bool]]:
        """Every verdict whose suggestion's evidence is known, oldest first: (evidence, helped)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT e.evidence, f.verdict FROM feedback f JOIN evidence e "
                "ON e.alert_key = f.alert_key AND e.suggested = f.suggested ORDER BY f.at"
            ).fetchall()
        return [(json.loads(e), verdict == "helped") for e, verdict in rows]

    def all(self) -> list[dict[str, str]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT alert_key, suggested, verdict, who, at, ref FROM feedback ORDER BY at"
            ).fetchall()
        return [dict(zip(("alert_key", "suggested", "verdict", "who", "at", "ref"), r)) for r in rows]
