"""Let go of the pages of a store's files that this process has mapped and read.

The embedded engine maps its files into the process, so every page a read touches stays mapped, counted in
the process's resident memory, until the kernel needs the memory. After reading every payload once (to pack
the ranking fields in memory, `RankingTable`), that is the whole payload. `madvise(MADV_DONTNEED)` on a
shared file mapping unmaps those pages and loses nothing: they stay in the kernel's page cache while it has
room (a later read maps one back without going to the disk) and are read from the file again once it has
taken them. A private mapping could hold changes of its own, so it is asked `MADV_PAGEOUT` instead, which
only advises. Elsewhere than Linux nothing happens.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import sys
import time
from pathlib import Path
from typing import NamedTuple

MADV_DONTNEED, MADV_PAGEOUT = 4, 21  # linux/mman.h
log = logging.getLogger("oncall_memory.store")


class Mapping(NamedTuple):
    start: int
    end: int
    shared: bool
    path: str


def mappings(root: Path, marker: str, skip: tuple[str, ...] = ()) -> list[Mapping] | None:
    """This process's mappings of files under `root` whose path below `root` holds `marker` and none of `skip`
    (read below it: a data dir that happens to be named "deleted-..." must not hide every file); None off
    Linux."""
    if not sys.platform.startswith("linux"):
        return None
    prefix = str(root.resolve())
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    found = []
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        path = fields[5].strip() if len(fields) > 5 else ""
        below = path[len(prefix) :] if path.startswith(prefix + "/") else None
        if below is not None and marker in below and not any(word in below for word in skip):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            found.append(Mapping(start, end, fields[1].endswith("s"), path))
    return found


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def let_go(found: list[Mapping]) -> int:
    """madvise each mapping (see the module's docstring). Returns the bytes of the mappings let go of."""
    if (libc := _libc()) is None:
        return 0
    released = 0
    for m in found:
        advice = MADV_DONTNEED if m.shared else MADV_PAGEOUT
        if libc.madvise(ctypes.c_void_p(m.start), ctypes.c_size_t(m.end - m.start), advice) == 0:
            released += m.end - m.start
        else:  # unmapped since it was listed (ENOMEM), or an older kernel (EINVAL): nothing to do
            log.debug("madvise(%d) on %s: errno %d", advice, m.path, ctypes.get_errno())
    return released


def release(root: Path, marker: str) -> int:
    """Let go of this process's mappings of files under `root` whose path holds `marker` (e.g.
    "payload_storage"). Returns the bytes of the mappings let go of."""
    return let_go(mappings(root, marker) or [])


class AfterEachRead:
    """Let go of the mappings of some files after every read of them, cheaply: the ranges are listed once
    (reading /proc/self/maps took 0.8 ms) and listed again every `fresh_seconds` for files mapped since.
    Before each range is let go of, `/proc/self/map_files/<range>` must still name its file (4 us a range):
    `MADV_DONTNEED` on a range the process has since mapped to something else would zero its memory. Where
    that check is refused (before Linux 5.9 it needs CAP_SYS_ADMIN, since then CAP_CHECKPOINT_RESTORE too),
    the list is read afresh every time instead.

    Why after every read: the original vectors a lookup scores by sit in the page cache in large folios (a
    service reads them there, `page_cache`), and one touch of a mapped page maps its whole folio. Let go of
    only every 30 s, 600 lookups at a million incidents left 5.5 GB of them mapped."""

    def __init__(self, root: Path, marker: str, *, skip: tuple[str, ...] = (), fresh_seconds: float = 30.0):
        self._root, self._marker, self._skip, self._fresh = root, marker, skip, fresh_seconds
        self._listed: list[Mapping] | None = None
        self._at = 0.0
        self._checked = True  # until /proc refuses the check

    def __call__(self) -> int:
        if self._listed is None or not self._checked or time.monotonic() - self._at > self._fresh:
            found, self._at = mappings(self._root, self._marker, self._skip), time.monotonic()
            if found is None:
                return 0
            # Shared mappings only: a private one is asked MADV_PAGEOUT, which would take the pages out of the
            # page cache too, and they are there to be read again.
            self._listed = [m for m in found if m.shared]
            if not self._checked:
                return let_go(self._listed)
        still = [m for m in self._listed if self._still(m)]
        if len(still) < len(self._listed):
            self._listed = None  # something was unmapped: list again next time
        return let_go(still)

    def _still(self, m: Mapping) -> bool:
        try:
            return os.readlink(f"/proc/self/map_files/{m.start:x}-{m.end:x}") == m.path
        except PermissionError:
            self._checked = False
            return False
        except OSError:  # gone
            return False


def trim_heap() -> None:
    """Hand the heap's free memory back to the kernel (glibc's `malloc_trim`). Reading a million payloads a
    batch at a time leaves freed memory scattered through the heap, which glibc keeps: at 100,000 incidents
    25 MB of the 53 MB the read added. Where there is no glibc, nothing happens."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # musl and others have no malloc_trim
        pass
