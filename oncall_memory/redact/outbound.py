"""Text that leaves for a chat or a pager is neutralised: no bidirectional overrides or isolates (a host
name could display reversed) and no invisible characters (a link or a command could differ from what it
looks like). Invisible is the same set detection unfolds (`redact.invisible`)."""

from __future__ import annotations

from .invisible import INVISIBLE

_STRIP = dict.fromkeys(map(ord, INVISIBLE))


def neutralise(text: str) -> str:
    """`text` without bidi controls and invisible characters."""
    return text.translate(_STRIP)
