"""Text that leaves for a chat or a pager is neutralised: no bidirectional overrides or isolates (U+202A-E,
U+2066-9: a host name could display reversed) and no invisible characters (a link or a command could
differ from what it looks like)."""

from __future__ import annotations

_STRIP = dict.fromkeys(
    map(
        ord,
        "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u200c\u200d\u2060\ufeff\u00ad",
    )
)


def neutralise(text: str) -> str:
    """`text` without bidi controls and invisible characters."""
    return text.translate(_STRIP)
