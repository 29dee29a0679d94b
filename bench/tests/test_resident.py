"""bench.perf.resident: a serving process's resident memory, by part of the store (what the 1M-in-2.5 GB work reads)."""

import os

from synth import synthetic_incidents

from bench.perf.resident import ANONYMOUS, of_process, resident_by_part
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings

SMAPS = """\
55d0c0000000-55d0c1000000 rw-p 00000000 00:00 0                          [heap]
Rss:               20480 kB
7f0000000000-7f0000100000 rw-p 00000000 00:00 0
Rss:                1024 kB
7f1000000000-7f1002000000 r--s 00000000 fd:00 123                        /data/edge/incidents/segments/ab-cd/payload_storage/page_0.dat
Size:              32768 kB
Rss:               32768 kB
7f2000000000-7f2001000000 r--s 00000000 fd:00 124                        /data/edge/incidents/segments/ab-cd/vector_storage-meaning/matrix.dat
Rss:                4096 kB
7f3000000000-7f3000100000 r--s 00000000 fd:00 125                        /data/edge/incidents/wal/closed-1
Rss:                2048 kB
7f4000000000-7f4000100000 r-xp 00000000 fd:00 126                        /usr/lib/libc.so.6
Rss:                1024 kB
"""


def test_each_mapping_counts_towards_the_part_of_the_store_its_file_belongs_to():
    parts = resident_by_part(SMAPS, "/data")
    assert parts == {
        "payload": 32.0,
        ANONYMOUS: 21.0,  # the heap and the unnamed mapping together
        "vectors (files: originals, and int8 when not pinned)": 4.0,
        "write-ahead log": 2.0,
        "libraries and other files": 1.0,
    }
    assert list(parts)[0] == "payload"  # largest first


def test_a_live_store_is_found_in_this_process_own_maps(tmp_path):
    settings = Settings(data_dir=tmp_path, embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(synthetic_incidents(50))
        parts = of_process(os.getpid(), tmp_path)
    assert parts[ANONYMOUS] > 0
    assert "payload" in parts and "write-ahead log" in parts  # the engine maps them from the data dir
