"""Many short texts scanned as one: an alert storm's post holds tens of thousands of distinct strings (label
values, annotations, fingerprints), and every detector's fixed cost per call (the gate's two sets, the
catalogue's native scan) was most of the time when each was scanned alone: 30,000 strings took 2.2 s.

The short strings are joined, `SEPARATOR` between them, into batches that fit one scan window, and each
batch is scanned once. A string that no finding touches holds no secret; a string a finding touches
(a secret of its own, or a match that ran in from its neighbour) is scanned again alone, and what that
finds is its answer. So a batch can only send a string to be read again, never clear it: the answer is
the one a scan of the string alone gives.

The separator keeps neighbours out of each other's context: a line break ends every line-bound rule and
the "nearby" detectors' reach, and the unit separator between two breaks is neither space nor a token's
character, so no `\\s+`, no word boundary's lookback and no wrapped-token join runs from one string into
the next. `tests/test_redact.py` holds the batch's answers equal to the strings' own on every
corpus the redaction is tested with.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

from .base import Span, merge
from .engine import WINDOW, scan

SEPARATOR = "\n\x1f\n"
# A string longer than this is scanned alone (its windows are its own); shorter ones share a batch.
ALONE_FROM = 4_096
BATCH_CHARS = WINDOW - ALONE_FROM  # a batch stays within one window


def secret_spans_of(strings: Iterable[str]) -> dict[str, list[Span]]:
    """Each distinct string's merged secret spans, as `merge(secret_spans(s))` would give them one by one."""
    found: dict[str, list[Span]] = {}
    batch: list[str] = []
    size = 0
    for s in strings:
        if s in found:
            continue
        if len(s) >= ALONE_FROM:
            found[s] = _alone(s)
            continue
        found[s] = []  # until its batch's scan says otherwise
        if size + len(s) > BATCH_CHARS:
            _scan_batch(batch, found)
            batch, size = [], 0
        batch.append(s)
        size += len(s) + len(SEPARATOR)
    if batch:
        _scan_batch(batch, found)
    return found


def _alone(s: str) -> list[Span]:
    return merge(span for span, _ in scan(s))


def _scan_batch(batch: list[str], found: dict[str, list[Span]]) -> None:
    if len(batch) == 1:
        found[batch[0]] = _alone(batch[0])
        return
    starts, at = [], 0
    for s in batch:
        starts.append(at)
        at += len(s) + len(SEPARATOR)
    touched: set[int] = set()
    for (a, b), _ in scan(SEPARATOR.join(batch)):
        # Every string the span [a, b) overlaps: from the one holding a to the one holding b - 1.
        first, last = bisect_right(starts, a) - 1, bisect_right(starts, max(a, b - 1)) - 1
        touched.update(i for i in range(max(first, 0), last + 1) if a < starts[i] + len(batch[i]) and b > starts[i])
    for i in touched:
        found[batch[i]] = _alone(batch[i])
