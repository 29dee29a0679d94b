"""Hand back to the kernel the pages of a store's files that this process has mapped and read.

The embedded engine maps its files into the process, so every page a read touches stays resident (and counts
in its RSS) until the kernel needs the memory. After reading every payload once (to pack the ranking fields
in memory, `RankingTable`), that is the whole payload. `madvise(MADV_PAGEOUT)` asks the kernel to take such
pages now. It only advises: nothing is lost, a later read brings a page back from the file. Where it is
not there (Linux before 5.4, other systems) nothing happens.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from pathlib import Path

MADV_PAGEOUT = 21  # linux/mman.h
log = logging.getLogger("oncall_memory.store")


def page_out(root: Path, marker: str) -> int:
    """Advise the kernel to reclaim this process's mappings of files under `root` whose path holds `marker`
    (e.g. "payload_storage"). Returns the bytes advised."""
    if not sys.platform.startswith("linux"):
        return 0
    prefix = str(root.resolve())
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return 0
    advised = 0
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        path = fields[5].strip() if len(fields) > 5 else ""
        if not (path.startswith(prefix) and marker in path):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_PAGEOUT) == 0:
            advised += end - start
        else:  # unmapped since the read (ENOMEM) or an older kernel (EINVAL): nothing to do
            log.debug("madvise(MADV_PAGEOUT) on %s: errno %d", path, ctypes.get_errno())
    return advised
