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

import json
import threading
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import zstandard

from . import payload as P

PACKED = tuple(f for f in P.RANKING_FIELDS if f != P.TERMS)
DICTIONARY_BYTES = 16 * 1024
TRAINED_ON = 2_000  # records; fewer than ~50 give no dictionary (zstd alone)
LEVEL = 3
_TERMS = b"\x01"  # after the fields when the payload has `terms` (one stored before the field has none)


class RankingTable:
    """Point id to ranking fields. Writers call `put`; `get_many` is safe beside them (one lock for writes)."""

    def __init__(self, sample: Iterable[dict[str, Any]] = ()):
        self._dictionary = dictionary(sample)
        self._codecs = threading.local()  # a zstd (de)compressor serves one thread at a time
        self._rows: dict[bytes, bytes] = {}
        self._numbers: dict[int, int] = {}  # term id (a 31-bit hash) to its number here, in order of first sight
        self._terms = np.zeros(1024, dtype=np.int64)  # and back (the first len(self._numbers) entries)
        self._lock = threading.Lock()
        self._packed = 0

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def packed_bytes(self) -> int:
        """What the packed rows hold (not counting the dict that holds them, about 100 bytes a row)."""
        return self._packed

    def __contains__(self, point_id: str) -> bool:
        return _key(point_id) in self._rows

    def put(self, point_id: str, payload: dict[str, Any]) -> None:
        fields = _json({f: payload[f] for f in PACKED if f in payload})
        with self._lock:
            if (terms := payload.get(P.TERMS)) is None:
                steps = b""
            else:  # sorted, as steps: the store's common words have small numbers, so the steps are small
                numbers = np.sort(np.fromiter((self._number(t) for t in terms), dtype=np.int64, count=len(terms)))
                steps = _TERMS + np.diff(numbers, prepend=0).astype("<u4").tobytes()
            row = self._codec()[0].compress(len(fields).to_bytes(4, "little") + fields + steps)
            self._packed += len(row) - len(self._rows.get(key := _key(point_id), b""))
            self._rows[key] = row

    def get_many(self, point_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The ranking fields of each id held (ids not held are absent)."""
        out = {}
        for point_id in point_ids:
            if (row := self._rows.get(_key(point_id))) is not None:
                out[point_id] = self._unpack(row)
        return out

    def discard(self, point_ids: Iterable[str]) -> None:
        with self._lock:
            for point_id in point_ids:
                self._packed -= len(self._rows.pop(_key(point_id), b""))

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

    def _unpack(self, row: bytes) -> dict[str, Any]:
        data = self._codec()[1].decompress(row)
        end = 4 + int.from_bytes(data[:4], "little")
        fields: dict[str, Any] = json.loads(data[4:end])
        if data[end : end + 1] == _TERMS:
            steps = np.frombuffer(data, dtype="<u4", offset=end + 1)
            fields[P.TERMS] = self._terms[np.cumsum(steps)].tolist()
        return fields


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
    try:
        return uuid.UUID(point_id).bytes  # 16 bytes where the text is 36
    except ValueError:
        return point_id.encode()
