"""What every detector is: a name, a linear-time way to find the spans of the secrets in a text, and the
literal words without one of which it cannot find anything.

Patterns are compiled with RE2 (`google-re2`): its automata run in time linear in the text whatever the
pattern and the input, which Python's backtracking `re` does not promise (a keyword rule of the earlier
`re` detectors took seconds on 100 KB of one keyword repeated). RE2 has no look-around and no
back-references: a rule that needs one is a small scanner of its own, linear by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import re2

Span = tuple[int, int]

_OPTIONS = re2.Options()
_OPTIONS.max_mem = 64 << 20  # the DFA cache: RE2 falls back to its slower NFA, still linear, past this


def compile_re2(regex: str) -> re2._Regexp:
    """`regex` compiled by RE2 (Python's `re` syntax, minus look-around and back-references)."""
    return re2.compile(regex, _OPTIONS)


@dataclass(frozen=True)
class Detector:
    name: str  # how the README and the test reports call it
    find: Callable[[str], Iterator[Span]]  # the spans of the secrets in a text
    # Lower-case literals one of which every secret it finds sits next to (gitleaks' idea): the detector
    # runs only on text holding one, which keeps it off clean text. Empty: it always runs.
    keywords: frozenset[str] = frozenset()
    # A regex that matches wherever the detector can find something (a pattern detector's own): all of
    # them are asked at once, in one pass of an RE2 set, and only the detectors whose trigger matched run.
    trigger: str | None = None


class Groups:
    """A compiled pattern's group numbers by name, read once: google-re2 rebuilds `groupindex` on every
    access and its `span` takes numbers only."""

    def __init__(self, compiled: re2._Regexp):
        self._index: dict[str, int] = dict(compiled.groupindex)

    def __getattr__(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise AttributeError(name) from None


def pattern(name: str, regex: str, *, group: int | str = 0, keywords: Iterable[str] = ()) -> Detector:
    """A detector whose secret is `group` of every match of `regex` (RE2 syntax)."""
    compiled = compile_re2(regex)
    number = getattr(Groups(compiled), group) if isinstance(group, str) else group

    def find(text: str) -> Iterator[Span]:
        for match in compiled.finditer(text):
            start, end = match.span(number)
            if start < end:
                yield start, end

    return Detector(name, find, frozenset(k.lower() for k in keywords), trigger=regex)


def merge(spans: Iterable[Span]) -> list[Span]:
    """Overlapping or touching spans as one, in text order."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]
