"""One owner per Edge store: a lock file held from open to close (the engine itself locks only an existing
shard), released by the kernel if the process dies."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from ...errors import StoreUnavailable
from .edge_layout import _IN_USE


def hold_lock(lock_path: Path, path: Path) -> IO[bytes]:
    """One owner per store, held from open to close (the engine itself locks only an existing shard)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    handle = lock_path.open("ab")
    try:
        _lock_exclusive(handle)
    except OSError as exc:
        handle.close()
        raise StoreUnavailable(_IN_USE.format(path=path)) from exc
    return handle


def _lock_exclusive(handle: IO[bytes]) -> None:
    """flock, not blocking: held until the file is closed, released by the kernel if the process dies.
    Straight through fcntl where there is one: importing portalocker also imports redis when it is
    installed (0.1 s of every command's start-up)."""
    try:
        import fcntl
    except ImportError:  # Windows
        import portalocker

        try:
            portalocker.lock(handle, portalocker.LOCK_EX | portalocker.LOCK_NB)
        except portalocker.LockException as exc:
            raise BlockingIOError(str(exc)) from exc
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
