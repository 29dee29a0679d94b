"""Read the files a lookup reads from disk into the kernel's page cache, once, as a service starts.

A ranked lookup scores its fifty candidates with their original vectors, which the embedded engine keeps on
disk: 6 GB at a million incidents of 1536 dims. Read from a cold disk those fifty took 6.5-23 ms of a
lookup here, against 1 ms from the page cache. So a service reads the files once, front to back (134 MB/s
on this machine's disk: 46 s at a million), in a thread at low priority. The pages are the kernel's, not the
process's: they are read into one reused buffer, so the service's resident memory does not grow, and the
kernel takes them back when something else needs the room (a lookup then reads from the disk again). Files
larger than half the memory available are not read: they would push out pages something else needs.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

CHUNK = 8 * 2**20
log = logging.getLogger("oncall_memory.store")


def available() -> int | None:
    """Bytes the kernel says it can give without swapping (`MemAvailable`), or None where it does not say."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def fits(total: int, room: int | None) -> bool:
    """Whether files of `total` bytes are worth reading into a page cache with `room` bytes available."""
    return room is not None and total <= room // 2


def read_into_cache(paths: Sequence[Path], stop: threading.Event) -> int:
    """Read `paths` front to back into one reused buffer, so their pages land in the page cache. Stops early
    when `stop` is set; a file gone meanwhile (a reindex swapped the collection) is skipped. Returns the bytes
    read."""
    buffer = bytearray(CHUNK)
    done = 0
    for path in paths:
        try:
            with open(path, "rb", buffering=0) as f:
                if hasattr(os, "posix_fadvise"):  # read ahead as far as the kernel likes, and drop nothing
                    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
                while not stop.is_set() and (n := f.readinto(buffer)):
                    done += n
        except OSError as exc:
            log.debug("not read into the page cache: %s (%s)", path, exc)
        if stop.is_set():
            break
    return done


def keep_cached(paths: Sequence[Path], stop: threading.Event, what: str) -> threading.Thread | None:
    """Start a thread reading `paths` into the page cache when they fit (see the module's docstring); None
    when they do not, or when there is nothing to read."""
    total = sum(_size(p) for p in paths)
    if not total:
        return None
    room = available()
    if not fits(total, room):
        log.info(
            "%s (%.1f GB) left on disk: more than half the %s available; lookups read them as they need them",
            what,
            total / 1e9,
            f"{room / 1e9:.1f} GB" if room is not None else "memory (unknown)",
        )
        return None

    def read() -> None:
        if sys.platform.startswith("linux"):  # below the lookups' threads (Linux gives each thread its own)
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
            except OSError:
                pass
        started = time.perf_counter()
        done = read_into_cache(paths, stop)
        if not stop.is_set():
            log.info("%s (%.1f GB) read into the page cache in %.0f s", what, done / 1e9, time.perf_counter() - started)

    thread = threading.Thread(target=read, name="page-cache", daemon=True)
    thread.start()
    return thread


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # gone since it was listed (a reindex swapped the collection in)
        return 0
