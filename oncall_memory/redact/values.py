"""Redaction of whole records (through lists and dicts, keys too), and the mark that a record has passed
the boundary already, so what the memory stored is never scanned again when it is read back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .base import Span, merge
from .engine import cap, redact, replace, secret_spans

_passed: ContextVar[bool] = ContextVar("oncall_memory_redacted", default=False)


@contextmanager
def already_redacted() -> Iterator[None]:
    """Inside, models built from the memory's own records (the outbox, the store's payloads) skip redaction:
    their text passed it when it entered."""
    token = _passed.set(True)
    try:
        yield
    finally:
        _passed.reset(token)


def is_already_redacted() -> bool:
    return _passed.get()


def redact_all(value: Any) -> Any:
    """`value` with every string in it cut and redacted, through lists and dicts (keys too). Each distinct
    string is scanned once, whole and on its own: an alert storm repeats its label names and values a
    thousand times, and a post's cost is its distinct text, not its repeats."""
    found: dict[str, list[Span]] = {}
    for s in _strings(value):
        if s not in found:
            found[s] = merge(span for span, _ in secret_spans(s))
    if not any(found.values()):
        return cap_each(value)
    return _replaced(value, found)


def _replaced(value: Any, found: dict[str, list[Span]]) -> Any:
    if isinstance(value, str):
        return replace(value, found[value])
    if isinstance(value, list):
        return [_replaced(v, found) for v in value]
    if isinstance(value, dict):
        return {_replaced(k, found) if isinstance(k, str) else k: _replaced(v, found) for k, v in value.items()}
    return value


def holds_secret(value: Any) -> bool:
    """Does any string in `value` (through lists and dicts) hold a secret anywhere? Each distinct string is
    scanned whole, on its own (joined, a long one pushed the others past a cut, and a line break between two
    fields read as one token wrapped in two)."""
    seen: set[str] = set()
    for s in _strings(value):
        if s not in seen:
            seen.add(s)
            if secret_spans(s):
                return True
    return False


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                yield k
            yield from _strings(v)


def redact_each(value: Any) -> Any:
    """Every string in `value` redacted, one by one."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_each(v) for v in value]
    if isinstance(value, dict):
        return {redact_each(k) if isinstance(k, str) else k: redact_each(v) for k, v in value.items()}
    return value


def cap_each(value: Any) -> Any:
    """Every string in `value` cut to the field limit (a clean record can still hold a megabyte of one field)."""
    if isinstance(value, str):
        return cap(value)
    if isinstance(value, list):
        return [cap_each(v) for v in value]
    if isinstance(value, dict):
        return {cap_each(k) if isinstance(k, str) else k: cap_each(v) for k, v in value.items()}
    return value
