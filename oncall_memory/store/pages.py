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
import logging
import sys
from pathlib import Path

MADV_DONTNEED, MADV_PAGEOUT = 4, 21  # linux/mman.h
log = logging.getLogger("oncall_memory.store")


def release(root: Path, marker: str) -> int:
    """Let go of this process's mappings of files under `root` whose path holds `marker` (e.g.
    "payload_storage"). Returns the bytes of the mappings let go of."""
    if not sys.platform.startswith("linux"):
        return 0
    prefix = str(root.resolve())
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return 0
    released = 0
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        path = fields[5].strip() if len(fields) > 5 else ""
        if not (path.startswith(prefix) and marker in path):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        advice = MADV_DONTNEED if fields[1].endswith("s") else MADV_PAGEOUT
        if libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), advice) == 0:
            released += end - start
        else:  # unmapped since it was listed (ENOMEM), or an older kernel (EINVAL): nothing to do
            log.debug("madvise(%d) on %s: errno %d", advice, path, ctypes.get_errno())
    return released


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
