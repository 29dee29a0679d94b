"""Where a serving process's resident memory goes, by part of the store, read from /proc/<pid>/smaps.

The engine maps each part of a segment from its own files (`vector_storage-<name>`, `payload_storage`,
`wal`, ...), so a mapping's path says which part its resident pages belong to. What is pinned in RAM (the
int8 copies of the vectors, the sparse index) is anonymous memory, indistinguishable there from Python's
own heap: `bench.perf.scale` prints the int8 share beside it, computed from the count and the dimension.

File-backed pages count in RSS while they stay mapped and cached, and the kernel maps neighbours of a
faulted page that are already in the page cache: the file parts depend on what was read before, and are
the first the kernel takes back under pressure. The anonymous part is what cannot be taken back.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

# A segment's directories, as the engine names them, and what each holds.
PARTS = (
    ("vector_storage-", "vectors (files: originals, and int8 when not pinned)"),
    ("vector_index-", "vector indexes (graph, sparse index files)"),
    ("payload_storage", "payload"),
    ("payload_index", "payload indexes"),
    ("id_tracker", "id tracker"),
    ("/wal/", "write-ahead log"),
)
ANONYMOUS = "anonymous (heap, pinned int8 vectors, sparse index)"
_MAPPING = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")


def part_of(path: str, root: str) -> str:
    if path in ("", "[heap]") or path.startswith("[anon"):
        return ANONYMOUS
    if path.startswith("["):  # [stack], [vdso], ...
        return "other"
    if not path.startswith(root):
        return "libraries and other files"
    return next((part for marker, part in PARTS if marker in path), "other store files")


def resident_by_part(smaps: str, data_dir: str | Path) -> dict[str, float]:
    """MB resident per part, largest first, from the text of /proc/<pid>/smaps."""
    root = str(Path(data_dir).resolve())
    sizes: Counter[str] = Counter()
    part = "other"
    for line in smaps.splitlines():
        if _MAPPING.match(line):
            fields = line.split(maxsplit=5)
            part = part_of(fields[5].strip() if len(fields) > 5 else "", root)
        elif line.startswith("Rss:"):
            sizes[part] += int(line.split()[1])
    return {name: kb / 1024 for name, kb in sizes.most_common()}


def of_process(pid: int, data_dir: str | Path) -> dict[str, float]:
    return resident_by_part(Path(f"/proc/{pid}/smaps").read_text(), data_dir)
