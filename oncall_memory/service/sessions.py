"""The search page's sessions, kept on the server: what the browser holds is a random id, nothing derived
from the API token.

- A session starts at `/login` with the right token, or a person's name and password (`accounts.py`), and
  lasts `LIFETIME`. Logging out ends it on the server (the cookie is worthless afterwards, wherever it was
  copied), and so does a change of what opened it: each session remembers a MAC of its key (the API
  token, or the fingerprint of the person's password hash), so a new token or password, or a removed
  account, ends it.
- Each session has its own CSRF token, which the page's forms that change something (feedback) carry.
- Only a hash of the id is stored (`<data dir>/sessions.sqlite3`), so the file does not hold live cookies.
- `Attempts` throttles `/login` per client (a token bucket: a short burst, then a steady trickle), so the
  token cannot be guessed at the speed of the network.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..store.sqlite_file import open_db

LIFETIME = 12 * 3600  # one on-call shift and then some

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id_hash TEXT PRIMARY KEY,   -- sha256 of the cookie's value
    token_mac TEXT NOT NULL,    -- a MAC of the key that opened it: a new token or password ends it
    csrf TEXT NOT NULL,
    expires REAL NOT NULL,
    who TEXT);                  -- the account's name; NULL when the API token opened it
"""


@dataclass(frozen=True)
class Person:
    """Someone a trusted authenticating proxy vouches for (see `page.proxy_person`): feedback is theirs."""

    who: str
    csrf: str


@dataclass(frozen=True)
class Session:
    id: str
    csrf: str
    person: str | None = None  # the account that logged in; None for the API token

    @property
    def who(self) -> str:
        """How feedback from this session is signed: the person's account, or for the shared token a name
        stable for the session (never the cookie itself)."""
        if self.person is not None:
            return f"user:{self.person}"
        return "page:" + hashlib.sha256(self.id.encode()).hexdigest()[:10]


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()


def _token_mac(token: str) -> str:
    return hmac.new(token.encode(), b"oncall-memory page session v2", hashlib.sha256).hexdigest()


class Sessions:
    def __init__(self, path: str, *, lifetime: float = LIFETIME):
        self._db = open_db(path, _SCHEMA, what="the session store")
        if "who" not in {row[1] for row in self._db.execute("PRAGMA table_info(sessions)")}:
            self._db.execute("ALTER TABLE sessions ADD COLUMN who TEXT")  # a store from before accounts
        self._lock = threading.Lock()
        self.lifetime = lifetime

    def close(self) -> None:
        self._db.close()

    def start(self, key: str, person: str | None = None) -> Session:
        """A new session opened with `key` (the API token, or the person's password fingerprint)."""
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(24), person)
        now = time.time()
        with self._lock:
            self._db.execute("DELETE FROM sessions WHERE expires < ?", (now,))
            self._db.execute(
                "INSERT INTO sessions (id_hash, token_mac, csrf, expires, who) VALUES (?, ?, ?, ?, ?)",
                (_hash(session.id), _token_mac(key), session.csrf, now + self.lifetime, person),
            )
        return session

    def find(self, session_id: str, key_of: Callable[[str | None], str | None]) -> Session | None:
        """The live session with this id whose key is still `key_of(its person)` (None: the key is gone,
        an account removed or no token set); None otherwise."""
        if not session_id or len(session_id) > 100:
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT token_mac, csrf, expires, who FROM sessions WHERE id_hash = ?", (_hash(session_id),)
            ).fetchone()
        if row is None:
            return None
        token_mac, csrf, expires, person = row
        key = key_of(person)
        if expires < time.time() or key is None or not hmac.compare_digest(token_mac, _token_mac(key)):
            self.end(session_id)
            return None
        return Session(session_id, csrf, person)

    def end(self, session_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM sessions WHERE id_hash = ?", (_hash(session_id),))


class Attempts:
    """Failed login attempts per client: `burst` at once, then one every `every` seconds; while a client
    is over, every attempt of its waits (the right token too: a guesser learns nothing). Bounded memory:
    the oldest clients are forgotten past `clients`."""

    def __init__(self, *, burst: int = 10, every: float = 6.0, clients: int = 10_000):
        self._burst, self._every, self._clients = burst, every, clients
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, at)
        self._lock = threading.Lock()

    def wait(self, client: str, now: float | None = None) -> float:
        """0 when this client may try now; else the seconds to wait."""
        tokens = self._tokens(client, time.monotonic() if now is None else now)
        return 0.0 if tokens >= 1 else (1 - tokens) * self._every

    def failed(self, client: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens = self._tokens_locked(client, now)
            self._buckets.pop(client, None)
            self._buckets[client] = (max(0.0, tokens - 1), now)
            while len(self._buckets) > self._clients:
                self._buckets.pop(next(iter(self._buckets)))

    def _tokens(self, client: str, now: float) -> float:
        with self._lock:
            return self._tokens_locked(client, now)

    def _tokens_locked(self, client: str, now: float) -> float:
        tokens, at = self._buckets.get(client, (float(self._burst), now))
        return min(float(self._burst), tokens + (now - at) / self._every)
