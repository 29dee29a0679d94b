"""Secrets written so that no detector sees them whole: a token with a zero-width space or a soft hyphen
in it (chat clients insert them), a token wrapped over two lines by a narrow terminal, a URL-encoded
query string. `unfold` gives the text as it would read without those, and where each of its characters
came from, so a secret found in the unfolded text is removed from the original.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from .base import Groups, Span, compile_re2
from .invisible import character_class

_TOKEN = r"[A-Za-z0-9+/_=.-]"
# What unfolding changes: an invisible character; a %XX escape of an ASCII character; the line break
# inside a token cut by wrapping (16 token characters before it, one after it).
_EDIT = compile_re2(rf"(?P<inv>{character_class()}+)|%(?P<hex>[0-7][0-9A-Fa-f])|{_TOKEN}{{16}}(?P<nl>\r?\n){_TOKEN}")
_G = Groups(_EDIT)


@dataclass(frozen=True)
class Unfolded:
    text: str
    _variant_at: list[int]  # breakpoints: variant offsets after each edit ...
    _original_at: list[int]  # ... and the original offsets there

    def original(self, span: Span) -> Span:
        """Where a span of the unfolded text lies in the original."""
        return self._map(span[0]), self._map(span[1])

    def _map(self, at: int) -> int:
        i = bisect_right(self._variant_at, at) - 1
        return self._original_at[i] + (at - self._variant_at[i])


def unfold(text: str) -> Unfolded | None:
    """The text without invisible characters, wrapped-token line breaks and %-escapes; None when it has none."""
    pieces: list[str] = []
    variant_at, original_at = [0], [0]
    last = length = 0
    for match in _EDIT.finditer(text):
        replacement = ""
        if match.group(_G.inv) is not None:
            start, end = match.span(_G.inv)
        elif match.group(_G.hex) is not None:
            (start, end), replacement = match.span(), chr(int(match.group(_G.hex), 16))
        else:
            start, end = match.span(_G.nl)
        pieces.append(text[last:start])
        length += start - last
        pieces.append(replacement)
        length += len(replacement)
        last = end
        variant_at.append(length)
        original_at.append(end)
    if last == 0 and len(variant_at) == 1:
        return None
    pieces.append(text[last:])
    return Unfolded("".join(pieces), variant_at, original_at)
