"""Canonical signatures: the same problem in another env, pod or minute reduces to the same string.

Exact match needs no intelligence; when it hits, it is the strongest evidence there is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .noise import strip_noise

_OPAQUE = re.compile(r"[0-9a-f]{8}(?:-?[0-9a-f]{4}){3}-?[0-9a-f]{12}|[0-9a-f]{16,}")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_SPACES = re.compile(r"\s+")


def canonical_signature(text: str | None, envs: Iterable[str | None] = ()) -> str | None:
    """Lowercased `text` with env names replaced by `<env>`, noise stripped and numbers as `<n>`.

    `envs` are the env names to replace (the alert's or incident's own env). Returns None for no text.
    """
    if not text or not text.strip():
        return None
    out = text.strip().lower()
    if _OPAQUE.fullmatch(out):
        return out  # a pager's dedup key (hex, a UUID): an identity, not words; noise stripping would erase it
    for env in sorted({e.lower() for e in envs if e}, key=len, reverse=True):
        out = re.sub(rf"(?<![\w-]){re.escape(env)}(?![\w-])", "<env>", out)
    out = strip_noise(out)
    out = _NUMBER.sub("<n>", out)
    return _SPACES.sub(" ", out).strip() or None
