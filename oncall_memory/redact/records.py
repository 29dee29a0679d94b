"""Redaction of whole records (through lists and dicts, keys too), and the mark that a record has passed
the boundary already, so what the memory stored is never scanned again when it is read back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .base import Span
from .batch import secret_spans_of
from .engine import MAX_FIELD_CHARS, cap, redact, replace

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
    string is answered once, as a scan of it whole and on its own would answer (`batch.py`: the short ones
    are scanned together and any a finding touches again alone): an alert storm repeats its label names and
    values a thousand times, and a post's cost is its distinct text, not its repeats."""
    found: dict[str, list[Span]] = secret_spans_of(_distinct(value))
    if any(found.values()):
        return _replaced(value, found)
    # Nothing to replace: the value itself, unless a string in it is past the field limit (a storm's post is
    # then not rebuilt string by string).
    return cap_each(value) if any(len(s) > MAX_FIELD_CHARS for s in found) else value


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
    answered as a scan of it whole and on its own would answer (`batch.py`; joined plainly, a long one pushed
    the others past a cut, and a line break between two fields read as one token wrapped in two)."""
    return any(secret_spans_of(_distinct(value)).values())


def _distinct(value: Any) -> list[str]:
    """Every distinct string in `value` (keys too), in the order first met. Iterative: a post's depth is
    bounded where it is parsed, but a walk without recursion costs a storm's 290,000 values a third of the
    time a generator per level did."""
    seen: dict[str, None] = {}
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            seen[v] = None
        elif isinstance(v, dict):
            for k, item in v.items():
                if isinstance(k, str):
                    seen[k] = None
                if isinstance(item, str):
                    seen[item] = None
                elif isinstance(item, (dict, list)):
                    stack.append(item)
        elif isinstance(v, list):
            for item in v:
                if isinstance(item, str):
                    seen[item] = None
                elif isinstance(item, (dict, list)):
                    stack.append(item)
    return list(seen)


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
