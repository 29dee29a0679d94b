"""The ranking fields kept in memory for a long-lived process (the service): read from the store in batches
between lookups, then read by each lookup instead of the payload (`EdgeStore._hits`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import qdrant_edge as E

from ...domain import payload as P
from ..mapped_pages import release, trim_heap
from ..ranking_table import TRAINED_ON, RankingTable, Trained
from .edge_layout import RELEASE_SECONDS


class RankingFieldsInMemory:
    """The part of `EdgeStore` that keeps the ranking fields in memory: the table, how far it was read, and
    when the payload's pages were last let go of."""

    _shard: E.EdgeShard | None
    _path: Path
    _payload_disk: bool
    _table: RankingTable | None
    _table_ready: bool
    _table_offset: Any
    _released: float

    def _scroll(self, request: E.ScrollRequest) -> tuple[list[Any], Any]:
        raise NotImplementedError

    def count(self) -> int:
        raise NotImplementedError

    def ranking_sample(self) -> list[dict[str, Any]]:
        if self._shard is None or self._table is not None:
            return []
        records, _ = self._scroll(
            E.ScrollRequest(limit=TRAINED_ON, with_payload=list(P.RANKING_FIELDS), with_vector=False)
        )
        return [r.payload or {} for r in records]

    def fill_ranking_table(self, batch: int = 256, *, trained: Trained | None = None) -> bool:
        """Read the next `batch` points' ranking fields into the table kept in memory, starting it first.
        True while there is more to read; lookups read the table once it holds every point. The caller holds
        the store's lock for each call, so writes and lookups go on between batches, and a point written
        meanwhile is read as it now is. With the payload on disk, a call once the table is full now and then
        lets go of the payload pages lookups have mapped since (`pages.release`).

        A payload in RAM gets the table too: the engine parses a point's whole payload to return any field
        of it, which made the exact scoring of a lookup's 50 candidates 1.1-1.3 ms of a 7 ms lookup at
        100,000 (0.09 ms without payload), and the table gives the same fields back in about 0.5 ms, for
        48 MB of the process at 100,000, 26 MB of it packed rows (docs/operations.md, "The ranking fields from
        the table, beside a payload in RAM").

        A batch of 256 holds the lock about 25 ms at 100,000 (1,024 held it 90-95 ms, for the same 9-10 s in
        all). The table's dictionary is trained on 2,000 records (`ranking_sample`); given `trained`, the
        caller trained it outside its lock, and the first call is a batch like the others (without, it
        trains here, and held the lock about 0.35 s at 100,000)."""
        if self._table_ready:
            if self._payload_disk and time.monotonic() - self._released > RELEASE_SECONDS:
                self._release_payload()
            return False
        if self._shard is None:
            return False
        training = self._table is None and trained is None
        records, self._table_offset = self._scroll(
            E.ScrollRequest(
                offset=self._table_offset,
                limit=TRAINED_ON if training else batch,
                with_payload=list(P.RANKING_FIELDS),
                with_vector=False,
            )
        )
        if self._table is None:  # the first records read train the table's dictionary, unless it came trained
            self._table = RankingTable([r.payload or {} for r in records], expected=self.count(), trained=trained)
        for r in records:
            self._table.put(str(r.id), r.payload or {})
        self._table_ready = self._table_offset is None
        if self._table_ready:
            if self._payload_disk:  # every payload page was read once: let go of them (lookups now read 5 a time)
                self._release_payload()
            trim_heap()
        elif self._payload_disk and time.monotonic() - self._released > 1.0:  # nor let them pile up meanwhile
            self._release_payload()
        return not self._table_ready

    def _release_payload(self) -> None:
        # The kernel maps a faulted page's cached neighbours too (fault-around, 64 KB): each payload a lookup
        # shows would otherwise keep 16 pages mapped, and the whole payload in time.
        release(self._path, "payload_storage")
        self._released = time.monotonic()

    def ranking_table(self) -> tuple[int, int] | None:
        """(points held, bytes packed) of the ranking fields in memory, or None when none are kept."""
        return (len(self._table), self._table.packed_bytes) if self._table is not None else None

    def _forget_table(self) -> None:
        self._table, self._table_ready, self._table_offset = None, False, None
