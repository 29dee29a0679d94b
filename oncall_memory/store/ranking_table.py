"""Every incident's ranking fields, packed in memory, for a store whose payload lives on disk.

A lookup ranks its 50 candidates by their ranking fields (`payload.RANKING_FIELDS`). Read from a payload on
disk, that is 50 scattered page reads on a first-time lookup; kept in RAM as the engine's payload, it is
about 2 KB an incident, 2 GB at a million (docs/operations.md, "Where the resident memory goes"). Here an
incident's fields are its JSON compressed by zstd with a dictionary trained on the store's own records, and
its term ids as small numbers from the store's own vocabulary, sorted and delta-coded. The full payload is
still read from disk, for the few neighbours shown.

What `get_many` gives back is what the engine returns for those fields, but for the order of `terms`, which
every reader takes as a set (a test holds the two equal).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import orjson
import zstandard

from ..domain import payload as P

PACKED = tuple(f for f in P.RANKING_FIELDS if f != P.TERMS)
DICTIONARY_BYTES = 16 * 1024
TRAINED_ON = 2_000  # records; fewer than ~50 give no dictionary (zstd alone)
LEVEL = 3
_TERMS = b"\x01"  # after the fields when the payload has `terms` (one stored before the field has none)


class RankingTable:
    """Point id to ranking fields; safe to share between threads."""

    def __init__(self, sample: Iterable[dict[str, Any]] = (), *, expected: int = 0, trained: Trained | None = None):
        """`sample`: records to train the dictionary on, or `trained`: one trained already (`train`, which a
        caller may run outside its own lock); `expected`: rows to make room for at once."""
        self._dictionary = trained.dictionary if trained is not None else dictionary(sample)
        self._codecs = threading.local()  # a zstd (de)compressor serves one thread at a time
        self._rows = PackedRows(expected)
        self._numbers: dict[int, int] = {}  # term id (a 31-bit hash) to its number here, in order of first sight
        self._terms = np.zeros(1024, dtype=np.int64)  # and back (the first len(self._numbers) entries)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def packed_bytes(self) -> int:
        """What the packed rows hold (the index of them takes about 40 bytes a row more)."""
        return self._rows.live_bytes

    def __contains__(self, point_id: str) -> bool:
        with self._lock:
            return _key(point_id) in self._rows

    def put(self, point_id: str, payload: dict[str, Any]) -> None:
        fields = _json({f: payload[f] for f in PACKED if f in payload})
        with self._lock:
            if (terms := payload.get(P.TERMS)) is None:
                steps = b""
            else:  # sorted, as steps: the store's common words have small numbers, so the steps are small
                numbers = np.sort(np.fromiter(map(self._number, terms), dtype=np.int64, count=len(terms)))
                numbers[1:] -= numbers[:-1].copy()
                steps = _TERMS + numbers.astype("<u4").tobytes()
            self._rows.put(
                _key(point_id), self._codec()[0].compress(len(fields).to_bytes(4, "little") + fields + steps)
            )

    def get_many(self, point_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The ranking fields of each id held (ids not held are absent). A lookup's 50 at once: one probe of
        the index, one pass over every term (row by row this took 0.95-1.9 ms at 20,000 incidents, now 0.37-0.58)."""
        with self._lock:
            rows = self._rows.get_many([_key(point_id) for point_id in point_ids])
            vocabulary = self._terms  # grown by a copy, so the one read now holds every number of these rows
        decompress = self._codec()[1].decompress
        out: dict[str, dict[str, Any]] = {}
        worded: list[tuple[dict[str, Any], np.ndarray]] = []
        for point_id, row in zip(point_ids, rows, strict=True):
            if row is None:
                continue
            data = decompress(row)
            end = 4 + int.from_bytes(data[:4], "little")
            fields = out[point_id] = orjson.loads(data[4:end])
            if data[end : end + 1] == _TERMS:
                worded.append((fields, np.frombuffer(data, dtype="<u4", offset=end + 1)))
        if worded:
            steps = [s for _, s in worded]
            sizes = np.fromiter(map(len, steps), dtype=np.int64, count=len(steps))
            numbers = np.cumsum(np.concatenate(steps), dtype=np.int64)
            # Each row's steps start from its own first number: take off the running sum the rows before left.
            before = np.cumsum(sizes) - sizes
            numbers -= np.repeat(np.where(before > 0, numbers[before - 1], 0), sizes)
            terms = vocabulary[numbers].tolist()
            at = 0
            for (fields, _), size in zip(worded, sizes.tolist(), strict=True):
                fields[P.TERMS] = terms[at : at + size]
                at += size
        return out

    def discard(self, point_ids: Iterable[str]) -> None:
        with self._lock:
            for point_id in point_ids:
                self._rows.discard(_key(point_id))

    def _number(self, term: int) -> int:
        number = self._numbers.get(term)
        if number is None:
            number = len(self._numbers)
            if number == len(self._terms):
                self._terms = np.concatenate([self._terms, np.zeros(len(self._terms), dtype=np.int64)])
            self._terms[number] = term
            self._numbers[term] = number
        return number

    def _codec(self) -> tuple[zstandard.ZstdCompressor, zstandard.ZstdDecompressor]:
        codec = getattr(self._codecs, "pair", None)
        if codec is None:
            codec = self._codecs.pair = (
                zstandard.ZstdCompressor(
                    level=LEVEL, dict_data=self._dictionary, write_checksum=False, write_dict_id=False
                ),
                zstandard.ZstdDecompressor(dict_data=self._dictionary),
            )
        return codec


class Trained(NamedTuple):
    """A dictionary trained for a table (None: too few records to train on)."""

    dictionary: zstandard.ZstdCompressionDict | None


def train(sample: Iterable[dict[str, Any]]) -> Trained:
    return Trained(dictionary(sample))


def dictionary(sample: Iterable[dict[str, Any]]) -> zstandard.ZstdCompressionDict | None:
    """A zstd dictionary trained on sample records' packed fields: field names, the common values and the
    common words then cost a reference each. None when the sample is too small to train on."""
    records: list[bytes | bytearray | memoryview] = []
    for payload in sample:
        records.append(_json({f: payload[f] for f in PACKED if f in payload}))
        if len(records) >= TRAINED_ON:
            break
    try:
        return zstandard.train_dictionary(DICTIONARY_BYTES, records) if len(records) >= 50 else None
    except zstandard.ZstdError:  # too little to learn from (a sample of near-identical records)
        return None


def _json(fields: dict[str, Any]) -> bytes:
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode()


def _key(point_id: str) -> bytes:
    # Our point ids are uuid5s in their usual form: read as hex, three times faster than `uuid.UUID`. The key
    # lives only in this process's memory, so any other id just needs a key of its own.
    if len(point_id) == 36 and len(key := _hex_bytes(point_id.replace("-", ""))) == 16:
        return key
    return hashlib.blake2b(point_id.encode(), digest_size=16).digest()


def _hex_bytes(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        return b""


class PackedRows:
    """Bytes by 16-byte key, at about 40 bytes a row beside the bytes themselves (a dict of bytes takes
    about 300 more: two objects and an entry a row). Open addressing over numpy arrays of the key's halves;
    the rows' bytes in 16 MB chunks, so growing never copies them all. Not thread-safe: the table locks."""

    CHUNK = 16 * 2**20
    EMPTY, GONE = -1, -2

    def __init__(self, expected: int = 0) -> None:
        self._hi = np.zeros(0, dtype=np.uint64)  # the key's halves and its row, by slot
        self._lo = np.zeros(0, dtype=np.uint64)
        self._row_at = np.zeros(0, dtype=np.int64)
        self._used = 0
        rows = max(1024, expected + expected // 8)  # room for some writes before the arrays grow
        self._slots(1 << (2 * rows - 1).bit_length())  # at most half full
        self._where = np.zeros(rows, dtype=np.int64)  # row number -> chunk << 32 | offset
        self._size = np.zeros(rows, dtype=np.int32)
        self._chunks = [bytearray()]
        self._count = 0  # row numbers given out (a discarded row keeps its number unused)
        self.live = 0
        self.live_bytes = 0
        self._dead_bytes = 0

    def __len__(self) -> int:
        return self.live

    def __contains__(self, key: bytes) -> bool:
        return self._row(key) >= 0

    def get(self, key: bytes) -> bytes | None:
        return None if (row := self._row(key)) < 0 else self._bytes(row)

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        """`get` for many keys, probed together: slot by slot, each key on from where it was not found."""
        if not keys:
            return []
        halves = np.frombuffer(b"".join(keys), dtype="<u8").reshape(-1, 2)
        hi, lo = halves[:, 0], halves[:, 1]
        mask = len(self._row_at) - 1
        slots = (hi & np.uint64(mask)).astype(np.int64)
        found = np.full(len(keys), self.EMPTY, dtype=np.int64)
        todo = np.arange(len(keys))
        while len(todo):
            probed = slots[todo]
            rows = self._row_at[probed]
            there = (rows >= 0) & (self._hi[probed] == hi[todo]) & (self._lo[probed] == lo[todo])
            found[todo[there]] = rows[there]
            todo = todo[~there & (rows != self.EMPTY)]  # another key (or a discarded one) sat there: go on
            slots[todo] = (slots[todo] + 1) & mask
        return [None if row < 0 else self._bytes(row) for row in found.tolist()]

    def _bytes(self, row: int, chunks: list[bytearray] | None = None) -> bytes:
        """A row's bytes, from its chunk (`chunks`: the ones it was written to, while compaction moves it)."""
        where, size = int(self._where[row]), int(self._size[row])
        at = where & 0xFFFFFFFF
        return bytes((self._chunks if chunks is None else chunks)[where >> 32][at : at + size])

    def put(self, key: bytes, data: bytes) -> None:
        slot = self._slot_of(key)
        row = int(self._row_at[slot])
        if row >= 0:  # replaced: its old bytes are left behind until the next compaction
            self._dead_bytes += int(self._size[row])
            self.live_bytes -= int(self._size[row])
        else:
            if 2 * (self._used + 1) > len(self._row_at):
                self._slots(2 * len(self._row_at), rehash=True)
                slot = self._slot_of(key)
            row = self._count
            self._count += 1
            if row == len(self._where):
                self._where = np.concatenate([self._where, np.zeros_like(self._where)])
                self._size = np.concatenate([self._size, np.zeros_like(self._size)])
            hi, lo = _halves(key)
            self._hi[slot], self._lo[slot], self._row_at[slot] = hi, lo, row
            self._used += 1
            self.live += 1
        self._where[row] = self._append(data)
        self._size[row] = len(data)
        self.live_bytes += len(data)
        if self._dead_bytes > max(self.CHUNK, self.live_bytes):
            self._compact()

    def discard(self, key: bytes) -> None:
        if (row := self._row(key)) < 0:
            return
        slot = self._slot_of(key)
        self._row_at[slot] = self.GONE  # probing goes on past it
        self._dead_bytes += int(self._size[row])
        self.live_bytes -= int(self._size[row])
        self.live -= 1

    def _append(self, data: bytes) -> int:
        chunk = self._chunks[-1]
        if len(chunk) + len(data) > max(self.CHUNK, len(data)) and chunk:
            chunk = bytearray()
            self._chunks.append(chunk)
        at = len(chunk)
        chunk += data
        return (len(self._chunks) - 1) << 32 | at

    def _slots(self, capacity: int, *, rehash: bool = False) -> None:
        old: tuple[np.ndarray, np.ndarray, np.ndarray] | None = (self._hi, self._lo, self._row_at) if rehash else None
        self._hi = np.zeros(capacity, dtype=np.uint64)
        self._lo = np.zeros(capacity, dtype=np.uint64)
        self._row_at = np.full(capacity, self.EMPTY, dtype=np.int64)
        self._used = 0
        if old is not None:
            for hi, lo, row in zip(*(a.tolist() for a in old), strict=True):
                if row >= 0:
                    slot = self._probe(hi, lo)
                    self._hi[slot], self._lo[slot], self._row_at[slot] = hi, lo, row
                    self._used += 1

    def _probe(self, hi: int, lo: int) -> int:
        """The slot holding this key, else the empty slot where it would go."""
        mask = len(self._row_at) - 1
        # The home slot from the key's first bytes: a uuid's ninth byte has its variant in the top two bits,
        # so slots from the second half used a quarter of the table and probed on through long runs.
        slot = hi & mask
        row_at, his, los = self._row_at, self._hi, self._lo
        while True:
            row = row_at[slot]
            if row == self.EMPTY or (row != self.GONE and his[slot] == hi and los[slot] == lo):
                return slot
            slot = (slot + 1) & mask

    def _slot_of(self, key: bytes) -> int:
        return self._probe(*_halves(key))

    def _row(self, key: bytes) -> int:
        return int(self._row_at[self._slot_of(key)])

    def _compact(self) -> None:
        """Copy the live rows into fresh chunks, leaving replaced and discarded bytes behind."""
        chunks = self._chunks
        self._chunks = [bytearray()]
        for row in self._row_at[self._row_at >= 0].tolist():
            self._where[row] = self._append(self._bytes(row, chunks))
        self._dead_bytes = 0


def _halves(key: bytes) -> tuple[int, int]:
    return int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little")
