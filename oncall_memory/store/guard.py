"""The store behind the memory's locks, so a service's request threads, its worker, an in-process ingest
and an index build never interleave on the embedded engine.

- `lock` serialises store calls (reentrant). Embedding happens outside it: a slow embedder never holds up
  a lookup that needs only words, nor a health check.
- `writing` is the lock plus a write gate: every write holds both; an index build holds the gate alone
  while it copies, which holds writes back without holding lookups back.
- `exclusive` waits for an index build under way: reindex and restore replace the collection too.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..embedders import Embedder
from ..errors import NothingStored, OncallMemoryError
from . import page_cache
from .engines import IncidentStore
from .engines.base import BuildsIndex, IndexReport, IndexState, no_collection
from .ranking_table import train
from .readiness import EmbedderProbe, Readiness

REPLAY_BATCH = 256
TABLE_CHECK_SECONDS = 5.0  # how soon a swapped-in collection's ranking fields start to be read
# The share of the time the ranking fields' reading may take while it runs: after each batch it rests as
# long again. Back to back, its batches (about 25 ms of Python each, under the store's lock) left an alert
# storm posted in the first seconds after a start at 100,000 incidents 2.0-5.4 s to its 202 instead of
# 0.25 s (the reading took 5 s; at half the time, 11-12 s, lookups reading the payload meanwhile).
TABLE_FILL_SHARE = 0.5
# While lookups are being asked (one within `LOOKUPS_QUIET` seconds), it takes this share instead: a storm's
# thousand lookups right after a start each waited for its batches under the lock (the first 1,000-alert
# storm at 100,000 answered in 14.8 s, against 6.6 s before there was a reading to wait for). It never stops:
# a service asked without pause still gets its table, more slowly.
TABLE_FILL_SHARE_BUSY = 0.05
LOOKUPS_QUIET = 1.0
log = logging.getLogger("oncall_memory.store")


class _Both:
    """Two locks taken in order (and released in reverse) as one context manager, reusable."""

    def __init__(self, first: Any, second: Any):
        self._first, self._second = first, second

    def __enter__(self) -> None:
        self._first.acquire()
        try:
            self._second.acquire()
        except BaseException:
            self._first.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self._second.release()
        self._first.release()


class GuardedStore:
    def __init__(self, store: IncidentStore):
        self.store = store
        self._known: dict[str, set[str]] | None = None  # `known_values`
        self.lock = threading.RLock()
        self._gate = threading.Lock()
        self.writing = _Both(self._gate, self.lock)
        self._building = threading.Lock()  # one index build at a time
        self._contract_checked = False  # once per store: a lookup should not ask the engine every time
        self._closed = threading.Event()
        self._last_lookup = -math.inf  # `time.monotonic()` of the latest `looking_up`

    @contextmanager
    def looking_up(self) -> Iterator[None]:
        """The lock, for a lookup: the store is marked as asked first, so the ranking fields' reading gives way
        for a while (`TABLE_FILL_SHARE_BUSY`), to this lookup and to those after it."""
        self._last_lookup = time.monotonic()
        with self.lock:
            yield

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """No index build runs inside (one under way is waited for)."""
        with self._building:
            yield

    def readiness(self, probe: EmbedderProbe) -> Readiness:
        """Ready while the store answers, with its count and the embedder's model; `probe` says whether lookups
        are degraded to words (an embedder that does not answer)."""
        try:
            with self.lock:
                count = self.store.count() if self.store.exists() else 0
        except Exception as exc:  # any store failure means not ready; say which
            return Readiness(False, f"store unavailable: {exc}")
        return Readiness(True, f"{count} incidents, model {probe.embedder.model}", probe.problem())

    @contextmanager
    def first_write(self) -> Iterator[None]:
        """Around an ingest: when it fails and it was the first, the empty collection it left is dropped. An
        empty one would stay bound to the embedding model it was created for, and a switch of model would ask
        for a reindex of nothing."""
        first = not self.store.exists()
        try:
            yield
        except BaseException:
            if first and self.drop_if_empty():
                self.forget_contract()
            raise

    def drop_if_empty(self) -> bool:
        """Drop a collection that holds nothing (a first ingest that stored nothing). True when dropped."""
        with self.lock:
            try:
                if self.store.exists() and self.store.count() == 0:
                    self.store.drop()
                    return True
            except OncallMemoryError:  # best effort: the ingest's own error is the one to report
                pass
        return False

    def stats(self) -> dict[str, Any]:
        """Collection, location, contract and count. Raises `InvalidInput` when nothing was ingested."""
        with self.lock:
            if not self.store.exists():
                raise NothingStored(no_collection(self.store.collection, self.store.location))
            out = {
                "collection": self.store.collection,
                "location": self.store.location,
                **self.store.contract(),
                "count": self.store.count(),
            }
            if (held := self.store.ranking_table()) is not None:  # a service's, on an engine that keeps one
                out["ranking_fields_in_memory"] = held[0]
            return out

    def check_contract(self, embedder: Embedder) -> None:
        """Raise `NothingStored` before any ingest (before the embedder is asked its dimension: loading the
        local model takes seconds), `ContractMismatch` when the collection was built with another model."""
        if not self.store.exists():
            raise NothingStored(no_collection(self.store.collection, self.store.location))
        self.store.check_contract(embedder.model, embedder.dimension)

    def ensure_contract(self, embedder: Embedder) -> None:
        """`check_contract`, once: until `forget_contract` (after an ingest dropped an empty collection, or a
        reindex) it is not asked again."""
        with self.lock:
            if not self._contract_checked:
                self.check_contract(embedder)
                self._contract_checked = True

    def forget_contract(self) -> None:
        self._contract_checked = False

    def known_values(self, fields: tuple[str, ...]) -> dict[str, set[str]]:
        """The distinct values of these keyword fields (from the payload indexes), cached until a write."""
        with self.lock:
            if self._known is None:
                self._known = {f: set(self.store.values(f)) for f in fields} if self.store.exists() else {}
            return self._known

    def count_written(self, new: int) -> None:
        """After an ingest: the count the engine must now hold (`verify` compares it)."""
        self._known = None
        with self.lock:
            if self.store.exists():
                before = self.store.expected_count()
                self.store.record_count(self.store.count() if before is None else before + new)

    def index_state(self) -> IndexState | None:
        with self.lock:
            return self.store.index_state() if self.store.exists() else None

    def build_index(self, due: Callable[[IndexState], bool], room: Callable[[], None]) -> IndexReport | None:
        """Build the vector index beside the live collection and swap it in, when `due` says so.

        Lookups go on throughout except for the swap (closing the old collection and opening the new;
        `swap_seconds` in the report). Writes wait while the collection is copied and while what was written
        during the build is copied into the new one. `room()` raises `DiskFull` before the copy when the
        disk cannot take it. None: nothing to do, another build is running, or the engine indexes by itself.
        """
        store = self.store
        if not isinstance(store, BuildsIndex) or not self._building.acquire(blocking=False):
            return None
        try:
            with self._gate:
                with self.lock:
                    state = store.index_state() if store.exists() else None
                    if state is None or not due(state):
                        return None
                    room()
                    job = store.begin_index()
                try:
                    store.copy_for_index(job)
                except BaseException:
                    with self.lock:
                        store.abandon_index(job)
                    raise
            try:
                store.build_index(job)
                with self._gate:
                    store.replay_into_index(job, self._written_during(store, job))
                    with self.lock:
                        return store.finish_index(job)
            except BaseException:
                with self.lock:
                    store.abandon_index(job)
                raise
        finally:
            self._building.release()

    def _written_during(self, store: BuildsIndex, job: Any) -> Iterator[list[Any]]:
        # Each read of the live collection takes the lock briefly, so lookups go on between them.
        ids = store.written_during(job)
        for at in range(0, len(ids), REPLAY_BATCH):
            with self.lock:
                records = store.read_points(ids[at : at + REPLAY_BATCH])
            yield records

    def keep_in_memory(self) -> None:
        """For a service: the ranking fields in memory (`keep_ranking_fields`), and the files its lookups score
        candidates from in the page cache (`page_cache`)."""
        self.keep_ranking_fields()
        with self.lock:
            files = self.store.rescored_files()
        page_cache.keep_cached(files, self._closed, "original vectors")

    def keep_ranking_fields(self) -> threading.Thread:
        """Keep the ranking fields in memory, where the engine can (Edge, its payload on disk or in RAM): a
        thread reads them a batch at a time under the lock (lookups and writes go on between batches; lookups
        read the payload until the table is full), resting after each batch as long as it took
        (`TABLE_FILL_SHARE`), or nineteen times as long while lookups are being asked (`TABLE_FILL_SHARE_BUSY`),
        and again after a reindex or restore swaps another collection in."""

        def fill() -> None:
            more, started, rest = True, time.perf_counter(), 0.0
            while not self._closed.wait(rest if more else TABLE_CHECK_SECONDS):
                batch_started = time.perf_counter()
                try:
                    with self.lock:
                        if self._closed.is_set():
                            return
                        sample = self.store.ranking_sample()  # none once a table has started
                    # The table's dictionary is trained here, outside the lock (0.15 s at 100,000): lookups
                    # and writes go on meanwhile, and each call under it reads one batch.
                    trained = train(sample) if sample else None
                    with self.lock:
                        if self._closed.is_set():
                            return
                        if not more:
                            started = time.perf_counter()
                        was, more = more, self.store.fill_ranking_table(trained=trained)
                    busy = time.monotonic() - self._last_lookup < LOOKUPS_QUIET
                    share = TABLE_FILL_SHARE_BUSY if busy else TABLE_FILL_SHARE
                    rest = (time.perf_counter() - batch_started) * (1 / share - 1)
                except OncallMemoryError as exc:
                    log.warning("reading the ranking fields into memory stopped: %s", exc)
                    return
                with self.lock:
                    if was and not more and (held := self.store.ranking_table()):
                        log.info(
                            "ranking fields of %d incidents held in memory (%.0f MB packed), read in %.1f s",
                            held[0],
                            held[1] / 2**20,
                            time.perf_counter() - started,
                        )

        thread = threading.Thread(target=fill, name="ranking-fields", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self._closed.set()
        with self.lock:
            self.store.close()
