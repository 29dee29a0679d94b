"""The local token: the credential the service and the CLI on the same machine share through the data dir,
as Jupyter's server shares its token with its own clients.

`serve` keeps a random token in `<data dir>/local-token` (0600, kept across restarts). The CLI on this
machine reads it and sends it as a bearer token; a web page in the engineer's browser cannot read the file,
so on loopback, where the lookups may stay open, whatever writes to the memory, copies it or checks it
still needs a credential (docs/security.md).

Before the CLI sends that token, or an alert, to the address `service.json` names, it asks whatever listens
there to prove it holds the same token (`proof`): a process that took the port after the service died
cannot, and learns nothing from being asked.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

PROOF_CONTEXT = b"oncall-memory service proof:"
MAX_CHALLENGE = 128  # characters of a challenge (the CLI sends 64 hex digits)
_BYTES = 32


def read(path: Path | None) -> str | None:
    """The token kept at `path`, or None (no data dir on disk, no service has run, or unreadable)."""
    if path is None:
        return None
    try:
        token = path.read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None
    return token if len(token) >= 32 else None


def read_or_create(path: Path | None) -> str:
    """The token kept at `path`, made (random, 0600) when there is none; in memory only when `path` is None."""
    if (kept := read(path)) is not None:
        return kept
    token = secrets.token_urlsafe(_BYTES)
    if path is None:
        return token
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # Created 0600 before a byte is written: never readable by others, whatever the umask.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(token + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return read(path) or token


def proof(token: str, challenge: str) -> str:
    """What only a holder of `token` can answer to `challenge` (HMAC-SHA256, hex)."""
    return hmac.new(token.encode(), PROOF_CONTEXT + challenge.encode(), hashlib.sha256).hexdigest()


def challenge() -> str:
    return secrets.token_hex(32)


def proves(token: str, challenge: str, answer: str) -> bool:
    return hmac.compare_digest(proof(token, challenge).encode(), answer.encode("utf-8", "replace"))
