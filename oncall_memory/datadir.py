"""The data dir: where every file of a memory lives (or that it lives in memory, for tests), how a file
there is written whole, and whether the disk under it has room.

    <data dir>/
      edge/<collection>/ ...          the embedded store (qdrant-edge); qdrant/ for local mode
      edge/<collection>.contract.json the model and dimension it was built with; .count the points written
      feedback.sqlite3                responders' verdicts
      outbox.sqlite3                  the service's claimed alerts and deliveries
      service.json                    where the running service answers (removed when it stops)
      local-token                     the credential the service shares with the CLI on this machine
      answers.sqlite3                 what every alert was answered; the families with nothing on record
      last_ingest-<collection>.json   the last ingest's counts, for the status panel and /metrics
      backfill-pagerduty.json         a PagerDuty backfill's checkpoint
      pagerduty-open.json             PagerDuty incidents followed until they resolve
      models/                         the local model exported to ONNX
      prefect/                        the local Prefect server's database (`schedule`)
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import stat
import tempfile
from pathlib import Path

from .errors import DiskFull

MEMORY = ":memory:"
MB = 1 << 20
# What the embedded engine may write at once beyond the points themselves: it grows its files in
# 32 MB chunks (a payload page, a vector chunk, a write-ahead-log segment).
ENGINE_HEADROOM = 64 * MB
# Filesystems whose pages are memory: reading a hole of a file mapped into memory allocates it, so even
# opening the store fills its preallocated (sparse) files.
_MEMORY_BACKED = frozenset({"tmpfs", "ramfs", "shm", "devtmpfs"})
# Group and others get nothing: the store holds incidents, the side files responders' names and the
# page's CSRF tokens. Folders are 0700 and files 0600 whatever umask the process started with.
_NOT_OURS = stat.S_IRWXG | stat.S_IRWXO


LEGACY_DATA_DIR = Path(".oncall-memory")  # the default before 0.x: relative to wherever the command ran


def default_data_dir() -> Path:
    """Per user, where the platform keeps application data (platformdirs' user data dir, as simonw/llm
    does: ~/.local/share/oncall-memory on Linux), so a command run from another folder finds the same
    memory. A ./.oncall-memory an earlier version made in the current directory is still used (the CLI
    says so once per command)."""
    return LEGACY_DATA_DIR if LEGACY_DATA_DIR.is_dir() else user_data_dir()


def user_data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("oncall-memory", appauthor=False))


log = logging.getLogger(__name__)


class DataDir:
    def __init__(self, root: Path | str):
        self.in_memory = str(root) == MEMORY
        self.root = None if self.in_memory else Path(root)

    def __repr__(self) -> str:
        return f"DataDir({MEMORY if self.root is None else str(self.root)!r})"

    def file(self, name: str) -> Path | None:
        """The path of a file under the data dir; None when the memory lives in memory."""
        return None if self.root is None else self.root / name

    def sqlite(self, name: str) -> str:
        """Where a SQLite side file opens: its path, or `:memory:`."""
        return MEMORY if self.root is None else str(self.root / name)

    @property
    def feedback(self) -> str:
        return self.sqlite("feedback.sqlite3")

    @property
    def outbox(self) -> str:
        return self.sqlite("outbox.sqlite3")

    @property
    def sessions(self) -> str:
        return self.sqlite("sessions.sqlite3")

    @property
    def answers(self) -> str:
        """What every alert the service saw was answered, and the families with nothing on record."""
        return self.sqlite("answers.sqlite3")

    @property
    def accounts(self) -> str:
        """People's own logins for the page (`oncall-memory user add`)."""
        return self.sqlite("accounts.sqlite3")

    @property
    def service(self) -> Path | None:
        return self.file("service.json")

    @property
    def local_token(self) -> Path | None:
        """The credential the service shares with the CLI on this machine (`local_token.py`)."""
        return self.file("local-token")

    @property
    def models(self) -> Path | None:
        return self.file("models")

    @property
    def edge(self) -> Path:
        if self.root is None:
            raise ValueError("the embedded store needs a data dir on disk, not :memory:")
        return self.root / "edge"

    @property
    def qdrant(self) -> str:
        return self.sqlite("qdrant")

    @property
    def prefect(self) -> Path:
        # A test's in-memory data dir still needs somewhere for a Prefect server's database.
        return (self.root if self.root is not None else Path(".oncall-memory")) / "prefect"

    def last_ingest(self, collection: str) -> Path | None:
        return self.file(f"last_ingest-{collection}.json")

    def backfill_checkpoint_of(self, source: str) -> Path | None:
        """How far a backfill of `source` got: one file per source, so two backfills never resume each other."""
        return self.file(f"backfill-{source}.json")

    def followed_open(self, source: str) -> Path | None:
        """The incidents `source` saw open and follows until they resolve (`pagerduty-open.json`)."""
        return self.file(f"{source}-open.json")

    # -- who may read it ----------------------------------------------------------------------------

    def make_private(self) -> list[Path]:
        """Make the data dir private to its owner: from now on this process creates files 0600 and folders
        0700 (the umask, which the embedded engine's and SQLite's files follow too), and whatever is there
        already readable by others is fixed, with a warning. Returns what was fixed."""
        if self.root is None:
            return []
        os.umask(os.umask(0) | _NOT_OURS)
        self.root.mkdir(parents=True, exist_ok=True)
        fixed = [p for p in _walk(self.root) if _private(p)]
        if fixed:
            log.warning(
                "%d files and folders under %s were readable by others (%s, ...): made them 0600/0700",
                len(fixed),
                self.root,
                ", ".join(str(p.relative_to(self.root)) or "." for p in fixed[:3]),
            )
        return fixed

    def shared(self) -> list[Path]:
        """Files and folders under the data dir that group or others may read or write (none, normally)."""
        if self.root is None or not self.root.exists():
            return []
        return [p for p in _walk(self.root) if not p.is_symlink() and p.lstat().st_mode & _NOT_OURS]

    # -- room on the disk ------------------------------------------------------------------------

    def free_bytes(self) -> int | None:
        """Bytes free for us on the data dir's filesystem (None in memory)."""
        if self.root is None:
            return None
        at = _existing(self.root)
        stats = os.statvfs(at)
        return stats.f_bavail * stats.f_frsize

    def need(self, nbytes: int, doing: str) -> None:
        """Raise `DiskFull` unless `nbytes` are free under the data dir (`doing` says what for)."""
        free = self.free_bytes()
        if free is not None and free < nbytes:
            raise DiskFull(no_space(self.root, doing, need=nbytes, free=free))

    def need_for_store(self, store_path: Path, *, writing: int, doing: str) -> None:
        """Before opening the embedded store at `store_path` (to write about `writing` bytes, 0 to read):
        what its engine may touch. On a memory-backed filesystem every hole of its preallocated files
        is filled as it opens; elsewhere only what it writes, up to a 32 MB chunk at a time."""
        if self.root is None:
            return
        need = holes(store_path) if self.memory_backed() else 0
        if writing or need:
            need += writing + ENGINE_HEADROOM
        if need:
            self.need(need, doing)

    def need_for_points(self, store_path: Path | None, points: int, dimension: int) -> None:
        """Before a batch of `points` goes into the store: the vector, its copy in the write-ahead log, the
        payload and its terms."""
        if points and store_path is not None:
            per_point = dimension * 4 * 2 + 8192
            self.need_for_store(store_path, writing=points * per_point, doing=f"store {points} incidents")

    def need_for_index_build(self, store_path: Path | None) -> None:
        """Before an index build: the copy of the store, then the engine's optimized segments."""
        if store_path is not None:
            self.need(2 * stored_bytes(store_path) + ENGINE_HEADROOM, "build the vector index (on a copy of the store)")

    def memory_backed(self) -> bool:
        return filesystem_type(_existing(self.root)) in _MEMORY_BACKED if self.root is not None else False


def _walk(root: Path) -> list[Path]:
    """The data dir and everything under it, symlinks not followed."""
    found = [root]
    for top, dirs, files in os.walk(root):
        found.extend(Path(top, name) for name in dirs + files)
    return found


def _private(path: Path) -> bool:
    """Take group and others' bits off `path`; True when there were any."""
    try:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode) or not mode & _NOT_OURS:
            return False
        os.chmod(path, stat.S_IMODE(mode) & ~_NOT_OURS)
    except FileNotFoundError:  # a WAL file the engine removed meanwhile
        return False
    return True


def no_space(path: Path | str | None, doing: str, *, need: int | None = None, free: int | None = None) -> str:
    amounts = (
        f" (needs about {need // MB + 1} MB, {free // MB} MB free)" if need is not None and free is not None else ""
    )
    return (
        f"no space left on {path} to {doing}{amounts}: free "
        f"{(need - free) // MB + 1 if need is not None and free is not None else 'some'} MB there, "
        f"or point ONCALL_MEMORY_DATA_DIR at a disk with room"
    )


def holes(path: Path) -> int:
    """Bytes of the files under `path` that are preallocated but not yet written (sparse)."""
    total = 0
    if not path.exists():
        return 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            try:
                st = os.stat(os.path.join(dirpath, name))
            except OSError:
                continue
            total += max(0, st.st_size - st.st_blocks * 512)
    return total


def stored_bytes(path: Path) -> int:
    """Bytes the files under `path` take on the disk (what a copy of them needs)."""
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                continue
    return total


def filesystem_type(path: Path) -> str | None:
    """The type of the filesystem holding `path` (Linux: from /proc/self/mounts), or None."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    target = str(path.resolve())
    best, kind = "", None
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, fields[2]
    return kind


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all: a temp file beside it, flushed, then renamed over it.
    Raises `DiskFull` when the disk has no room (the old file is left as it was)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if exc.errno == errno.ENOSPC:
            raise DiskFull(no_space(path.parent, f"write {path.name}")) from exc
        raise


_OS_ERRORS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EIO: "input/output error",
}
# What SQLite says, in its own words, when the file cannot take a write (SQLITE_FULL, SQLITE_READONLY,
# SQLITE_IOERR, SQLITE_CANTOPEN under a read-only folder).
_SQLITE = ("database or disk is full", "readonly database", "disk i/o error", "unable to open database file")


def cannot_write(exc: BaseException) -> str | None:
    """Why `exc` is the data dir refusing a write, in words, or None for any other error."""
    if isinstance(exc, DiskFull):
        return str(exc)
    if isinstance(exc, OSError) and exc.errno in _OS_ERRORS:
        return f"{_OS_ERRORS[exc.errno]}: {exc.filename or 'the data dir'}"
    if isinstance(exc, sqlite3.OperationalError) and any(m in str(exc).lower() for m in _SQLITE):
        return str(exc)
    return None
