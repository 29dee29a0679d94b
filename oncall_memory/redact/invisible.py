"""One notion of invisible, shared by detection (`unfold` removes these before looking for secrets) and by
what leaves for a chat or a pager (`neutralise` strips them): had the two lists differed, a token with a
character only the outbound list knew (an LRM inside `dapi…`) would pass detection split and reach Slack
whole.

Invisible is every format character (Unicode category Cf: bidi marks, overrides and isolates, zero-width
spaces and joiners, soft hyphen, word joiner, tag characters) and the other default-ignorable characters
that draw nothing (combining grapheme joiner, Hangul fillers, variation selectors).
"""

from __future__ import annotations

import unicodedata

# Default-ignorable code points outside category Cf (Unicode's DerivedCoreProperties, assigned ones).
_OTHER_IGNORABLE = [
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul choseong / jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xE0100, 0xE01EF),  # variation selectors supplement
]


# Where format characters are: the multilingual and supplementary planes (0-2) and the special-purpose
# plane (14). Planes 3-13 hold no format character and 15-16 are private use; reading only these takes a
# CLI start-up 25 ms instead of 110 (tests/test_redact.py checks it against every code point).
PLANES = (range(0, 0x30000), range(0xE0000, 0xF0000))


def _invisible(planes: tuple[range, ...] = PLANES) -> frozenset[str]:
    category = unicodedata.category
    chars = {ch for plane in planes for ch in map(chr, plane) if category(ch) == "Cf"}
    chars.update(chr(c) for low, high in _OTHER_IGNORABLE for c in range(low, high + 1))
    return frozenset(chars)


# INVISIBLE as ranges, for the Unicode versions it was read from: reading the planes anew is 25 ms of every
# process that redacts (a CLI lookup, each test's subprocess). Another version of Unicode is read anew;
# tests/test_redact.py checks the ranges of the running one against every code point.
_READ: dict[str, tuple[tuple[int, int], ...]] = {
    "14.0.0": (
        (0xAD, 0xAD),
        (0x34F, 0x34F),
        (0x600, 0x605),
        (0x61C, 0x61C),
        (0x6DD, 0x6DD),
        (0x70F, 0x70F),
        (0x890, 0x891),
        (0x8E2, 0x8E2),
        (0x115F, 0x1160),
        (0x17B4, 0x17B5),
        (0x180E, 0x180E),
        (0x200B, 0x200F),
        (0x202A, 0x202E),
        (0x2060, 0x2064),
        (0x2066, 0x206F),
        (0x3164, 0x3164),
        (0xFE00, 0xFE0F),
        (0xFEFF, 0xFEFF),
        (0xFFA0, 0xFFA0),
        (0xFFF9, 0xFFFB),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
        (0x13430, 0x13438),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0001, 0xE0001),
        (0xE0020, 0xE007F),
        (0xE0100, 0xE01EF),
    ),
}


def _from_ranges(ranges: tuple[tuple[int, int], ...]) -> frozenset[str]:
    return frozenset(chr(c) for low, high in ranges for c in range(low, high + 1))


INVISIBLE: frozenset[str] = (
    _from_ranges(_READ[unicodedata.unidata_version]) if unicodedata.unidata_version in _READ else _invisible()
)


def character_class() -> str:
    """INVISIBLE as an RE2 character class, in ranges."""
    points = sorted(map(ord, INVISIBLE))
    ranges: list[tuple[int, int]] = []
    for point in points:
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1] = (ranges[-1][0], point)
        else:
            ranges.append((point, point))
    body = "".join(rf"\x{{{lo:x}}}" if lo == hi else rf"\x{{{lo:x}}}-\x{{{hi:x}}}" for lo, hi in ranges)
    return f"[{body}]"
