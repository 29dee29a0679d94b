"""People's own logins for the page: local accounts, each a name and an argon2id hash of its password, in
`<data dir>/accounts.sqlite3`, kept with `oncall-memory user add|remove|list`.

The API token stays what machines use; a person who logs in by name gets a session that is theirs, so
their feedback is recorded as `user:<name>`. A session opened with a password ends when that password
changes or the account is removed (it remembers a fingerprint of the hash it was opened against).

Hashing is argon2-cffi's `PasswordHasher` with its defaults (RFC 9106's low-memory profile, about 0.1 s
and 64 MiB a check): slow on purpose, which is why the login route runs on the thread pool and is
throttled per client. A name that is not on record costs the same check, so timing does not tell which
names exist.
"""

from __future__ import annotations

import hashlib
import threading
import time
import unicodedata

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from ..errors import InvalidInput
from ..store.sqlite_file import open_db

MIN_PASSWORD, MAX_PASSWORD = 12, 1024
MAX_NAME = 200

_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    name TEXT PRIMARY KEY,      -- as typed at login, case-folded
    hash TEXT NOT NULL,         -- argon2id, with its own salt and parameters
    created REAL NOT NULL);
"""


def account_name(name: str) -> str:
    """The name as stored and looked up: trimmed and case-folded (people type their email address in any
    case); refused with what to fix when it cannot be a name."""
    name = unicodedata.normalize("NFKC", name.strip()).casefold()
    if not name:
        raise InvalidInput("a name is needed (an email address, or what people call the person)")
    if len(name) > MAX_NAME:
        raise InvalidInput(f"a name is at most {MAX_NAME} characters")
    if any(c.isspace() or unicodedata.category(c).startswith("C") for c in name):
        raise InvalidInput("a name has no spaces or control characters")
    return name


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise InvalidInput(f"a password is at least {MIN_PASSWORD} characters (a passphrase of a few words will do)")
    if len(password) > MAX_PASSWORD:
        raise InvalidInput(f"a password is at most {MAX_PASSWORD} characters")


class Accounts:
    def __init__(self, path: str, hasher: PasswordHasher | None = None):
        self._db = open_db(path, _SCHEMA, what="the accounts store")
        self._lock = threading.Lock()
        self._hasher = hasher or PasswordHasher()
        # What an unknown name is checked against, so it costs what a known one does.
        self._decoy = self._hasher.hash("not a password anyone has")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Accounts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, name: str, password: str) -> bool:
        """Set `name`'s password (a new account, or a new password for one on record, which ends the
        sessions its old password opened). True when the account is new."""
        name = account_name(name)
        check_password(password)
        hashed = self._hasher.hash(password)
        with self._lock:
            known = self._db.execute("SELECT 1 FROM accounts WHERE name = ?", (name,)).fetchone() is not None
            self._db.execute(
                "INSERT INTO accounts (name, hash, created) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET hash = excluded.hash",
                (name, hashed, time.time()),
            )
        return not known

    def remove(self, name: str) -> bool:
        with self._lock:
            return self._db.execute("DELETE FROM accounts WHERE name = ?", (account_name(name),)).rowcount > 0

    def names(self) -> list[str]:
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT name FROM accounts ORDER BY name")]

    def any(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM accounts LIMIT 1").fetchone() is not None

    def check(self, name: str, password: str) -> str | None:
        """The account's name when `password` is its password; None otherwise (whatever was wrong)."""
        try:
            name = account_name(name)
        except InvalidInput:
            name = ""
        hashed = self._hash_of(name) if name else None
        try:
            self._hasher.verify(hashed or self._decoy, password[:MAX_PASSWORD])
        except (VerificationError, InvalidHashError):
            return None
        if hashed is None:
            return None
        if self._hasher.check_needs_rehash(hashed):  # parameters raised since it was set: upgrade in place
            with self._lock:
                self._db.execute(
                    "UPDATE accounts SET hash = ? WHERE name = ? AND hash = ?",
                    (self._hasher.hash(password), name, hashed),
                )
        return name

    def fingerprint(self, name: str) -> str | None:
        """What a session opened by `name` is tied to: changes with the password; None once removed."""
        hashed = self._hash_of(name)
        return None if hashed is None else hashlib.sha256(hashed.encode()).hexdigest()

    def _hash_of(self, name: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT hash FROM accounts WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])
