"""A service reads the original vectors its lookups score candidates from into the page cache, once, without
growing its own resident memory, and leaves them on disk when they would not fit."""

import logging
import threading

from conftest import make_incident

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.store import page_cache


def resident_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def test_files_are_read_whole_into_one_buffer_not_into_the_process(tmp_path):
    big = tmp_path / "matrix.dat"
    with open(big, "wb") as f:
        for _ in range(12):
            f.write(b"\x01" * page_cache.CHUNK)
    small = tmp_path / "chunk_0.mmap"
    small.write_bytes(b"\x02" * 1000)
    before = resident_kb()
    done = page_cache.read_into_cache([big, tmp_path / "gone.dat", small], threading.Event())
    assert done == 12 * page_cache.CHUNK + 1000  # every byte, the vanished file skipped
    # 96 MB read; what stays in the process is the one 8 MB buffer at most (and the interpreter's noise)
    assert resident_kb() - before < 40 * 1024


def test_a_stop_ends_the_read_at_once(tmp_path):
    path = tmp_path / "matrix.dat"
    path.write_bytes(b"\x01" * (3 * page_cache.CHUNK))
    stop = threading.Event()
    stop.set()
    assert page_cache.read_into_cache([path], stop) == 0


def test_files_larger_than_half_the_available_memory_are_left_on_disk(tmp_path, monkeypatch, caplog):
    path = tmp_path / "matrix.dat"
    path.write_bytes(b"\x01" * 4096)
    monkeypatch.setattr(page_cache, "available", lambda: 8000)
    with caplog.at_level(logging.INFO, logger="oncall_memory.store"):
        assert page_cache.keep_cached([path], threading.Event(), "original vectors") is None
    assert "left on disk: more than half the 0.0 GB available" in caplog.text
    monkeypatch.setattr(page_cache, "available", lambda: None)  # a kernel that does not say: nothing read
    assert page_cache.keep_cached([path], threading.Event(), "original vectors") is None


def incidents(n=40):
    return [
        make_incident(id=f"PC-{i}", title=f"checkout pods crash looping on node group {chr(97 + i % 26)}")
        for i in range(n)
    ]


def test_a_service_reads_its_stores_original_vectors_into_the_page_cache(tmp_path, caplog):
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", embed_dim=256)
    with Memory.open(settings, embedder=FakeEmbedder(dimension=256)) as memory:
        memory.ingest(incidents())
        files = memory._store.rescored_files()
        # the originals, not the quantized copies or the deleted flags beside them
        assert files and all("vector_storage-meaning" in str(p) for p in files)
        assert not any("quantized" in str(p) or "deleted" in str(p) for p in files)
        assert sum(p.stat().st_size for p in files) >= 256 * 4 * len(incidents())
        with caplog.at_level(logging.INFO, logger="oncall_memory.store"):
            memory.keep_ranking_fields()
            # The reader thread may be done already (a few KB read at once): wait for it only if it is not.
            for reader in [t for t in threading.enumerate() if t.name == "page-cache"]:
                reader.join(30)
        assert "original vectors (0.0 GB) read into the page cache in" in caplog.text


def test_mapped_pages_are_let_go_of_after_each_read_and_nothing_is_lost(tmp_path):
    import mmap

    from oncall_memory.store.mapped_pages import AfterEachRead

    folder = tmp_path / "vector_storage-meaning"
    folder.mkdir()
    path = folder / "matrix.dat"
    path.write_bytes(bytes(range(256)) * (64 * 2**20 // 256))
    (folder / "quantized.data").write_bytes(b"\x07" * 2**20)
    let_go = AfterEachRead(tmp_path, "vector_storage-meaning", skip=("quantized",))
    with open(path, "rb") as f, open(folder / "quantized.data", "rb") as q:
        mapped = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        kept = mmap.mmap(q.fileno(), 0, prot=mmap.PROT_READ)
        before = resident_kb()
        assert sum(mapped[i] for i in range(0, len(mapped), 4096)) == sum(i % 256 for i in range(0, len(mapped), 4096))
        assert kept[0] == 7
        assert resident_kb() - before > 48 * 1024  # the touched pages are the process's now
        assert let_go() >= len(mapped)
        assert resident_kb() - before < 8 * 1024  # let go of, the skipped file's page aside
        assert mapped[12345] == 12345 % 256 and mapped[-1] == 255  # and read back from the page cache
        assert let_go() >= len(mapped)  # from the ranges listed before, checked
        mapped.close()  # unmapped: nothing is let go of, and the ranges are listed afresh
        assert let_go() == 0
        assert let_go() == 0
        kept.close()


def test_files_gone_since_they_were_listed_are_nothing_to_read(tmp_path):
    assert page_cache.keep_cached([tmp_path / "gone" / "matrix.dat"], threading.Event(), "original vectors") is None


def test_where_the_mappings_cannot_be_checked_they_are_listed_afresh_each_time(tmp_path, monkeypatch):
    import mmap
    import os

    from oncall_memory.store import mapped_pages as pages

    folder = tmp_path / "vector_storage-meaning"
    folder.mkdir()
    path = folder / "matrix.dat"
    path.write_bytes(b"\x05" * (16 * 2**20))

    def refused(link):
        raise PermissionError(link)

    monkeypatch.setattr(os, "readlink", refused)  # an unprivileged process on an older kernel
    let_go = pages.AfterEachRead(tmp_path, "vector_storage-meaning")
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        assert let_go() == 0  # refused: nothing let go of on a list it could not check
        for _ in range(2):
            before = resident_kb()
            assert sum(mapped[i] for i in range(0, len(mapped), 4096)) == 5 * len(mapped) // 4096
            assert resident_kb() - before > 12 * 1024
            assert let_go() >= len(mapped)  # listed afresh, and let go of
            assert resident_kb() - before < 4 * 1024
        mapped.close()


def test_a_private_mapping_is_left_alone(tmp_path):
    # MADV_PAGEOUT, the only advice a private mapping may get, would take the pages out of the page cache too.
    import mmap

    from oncall_memory.store.mapped_pages import AfterEachRead

    path = tmp_path / "vector_storage-meaning" / "matrix.dat"
    path.parent.mkdir()
    path.write_bytes(b"\x03" * 2**20)
    with open(path, "rb") as f:
        private = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
        assert private[100] == 3
        assert AfterEachRead(tmp_path, "vector_storage-meaning")() == 0
        shared = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        assert AfterEachRead(tmp_path, "vector_storage-meaning")() == len(shared)
        private.close()
        shared.close()


def test_a_data_dir_whose_name_holds_a_skipped_word_still_has_its_originals_let_go_of(tmp_path):
    import mmap

    from oncall_memory.store.mapped_pages import AfterEachRead

    root = tmp_path / "deleted-quantized-store"
    path = root / "vector_storage-meaning" / "matrix.dat"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x04" * 2**20)
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        assert mapped[0] == 4
        # the words are read below the store's own folder, where the engine names its files
        assert AfterEachRead(root, "vector_storage-meaning", skip=("quantized", "deleted"))() == len(mapped)
        mapped.close()


def test_an_unindexed_store_keeps_its_small_originals_mapped_and_an_indexed_one_lets_go(tmp_path, monkeypatch):
    """Below the index threshold every lookup reads every original vector (an exact search): letting go of
    them after each read only mapped them back at the next (1.5x the lookup's time at 7,000 incidents,
    `python -m bench.perf.originals`). Kept while small; let go of once indexed, or once past `KEEP_MAPPED_BYTES`."""
    from conftest import FIXTURES

    from oncall_memory.domain.alert import Alert
    from oncall_memory.embedders.fake import FakeEmbedder
    from oncall_memory.memory import Memory
    from oncall_memory.settings import Settings
    from oncall_memory.sources.jsonl_files import read_jsonl
    from oncall_memory.store.engines import edge

    with Memory.open(Settings(data_dir=tmp_path / "data", embedder="fake"), embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        store = memory._store
        calls: list[int] = []
        store._let_go_originals = lambda: calls.append(1) or 0

        def lookups() -> int:
            calls.clear()
            for mode in ("hybrid", "dense"):
                memory.similar(Alert(text="checkout pods crash looping"), mode=mode)
                memory.similar(Alert(text="checkout pods crash looping"), mode=mode, rank=False)
            return len(calls)

        assert lookups() == 0  # 64 small vectors, no index: kept
        monkeypatch.setattr(edge, "KEEP_MAPPED_BYTES", 1000)  # past the bound: let go after every read
        assert lookups() >= 4  # each of the four lookups scored by them at least once
        monkeypatch.setattr(edge, "KEEP_MAPPED_BYTES", 1 << 40)
        store._indexed = 64  # a vector index: its rescoring reads a few, and those are let go of
        assert lookups() >= 4
