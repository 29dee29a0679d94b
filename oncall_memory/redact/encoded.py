"""Credentials wrapped in base64: a Basic credential without its header (`user:password` encoded), a JSON
assignment of a key encoded whole, a Kubernetes Secret's `data:` values. Each candidate is decoded once."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from .base import Detector, Span, compile_re2
from .context_words import ASSIGN, KEY_WORDS, PASSWORD_WORDS

_B64_CANDIDATE_REGEX = r"[A-Za-z0-9+/]{16,}={0,2}"
# Python's `re`, not RE2, for this one pattern: a run of one character class then at most two "=", which
# `re` matches in linear time too (from any start it reads one run, at most 15 characters when it fails), and
# finds at a seventh of RE2's cost per match through RE2's Python layer (a storm's 10,000 fingerprints, each
# a candidate: 54 -> 8 ms).
_B64_CANDIDATE = re.compile(_B64_CANDIDATE_REGEX)
_USER_PASS = compile_re2(r"[\w.@+-]{1,64}:[^\s:]{6,}")
_ASSIGNED_IN = compile_re2(rf"(?i)(?:{PASSWORD_WORDS}|{KEY_WORDS})[\w.-]*{ASSIGN}\S")


def _base64_wrapped(text: str) -> Iterator[Span]:
    """Base64 whose decoded text is `user:password` (a Basic credential without its header) or holds a key
    assignment (`{"client_secret": ...}`). Each candidate is decoded once: linear in the text."""
    for m in _B64_CANDIDATE.finditer(text):
        candidate = m.group()
        if len(candidate) % 4:
            continue
        try:
            # The candidate holds only the alphabet (its pattern): `b64decode(validate=True)` would check so again.
            decoded = binascii.a2b_base64(candidate).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if not decoded.isprintable():
            continue
        if _USER_PASS.fullmatch(decoded) or _ASSIGNED_IN.search(decoded):
            yield m.span()


_K8S_PAIR = r"\s*[{,]?\s*[\"']?[\w.-]+[\"']?\s*:\s*[\"']?(?P<v>[A-Za-z0-9+/]{4,}={0,2})[\"']?\s*}?"
_K8S_BLOCK = compile_re2(rf"\b(?:data|stringData):(?:{_K8S_PAIR.replace('?P<v>', '')})+")
_K8S_VALUE = compile_re2(_K8S_PAIR)


def _kubernetes_secret_data(text: str) -> Iterator[Span]:
    """The base64 values after a Secret's `data:` (YAML lines or a flow map), while they look like base64.
    Each block is matched whole, then its pairs read within it: linear in the text."""
    for block in _K8S_BLOCK.finditer(text):
        offset = block.start() + block.group().index(":") + 1
        for pair in _K8S_VALUE.finditer(text[offset : block.end()]):
            if not _is_base64(pair.group(1)):
                break
            start, end = pair.span(1)
            yield offset + start, offset + end


def _is_base64(value: str) -> bool:
    if len(value) % 4 or value.isalpha() and value.islower():  # an English word is not an encoding
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


ENCODED: list[Detector] = [
    Detector("base64-wrapped credential", _base64_wrapped, trigger=_B64_CANDIDATE_REGEX),
    Detector("Kubernetes Secret data", _kubernetes_secret_data, frozenset({"data:"})),
]
