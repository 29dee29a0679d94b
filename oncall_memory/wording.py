"""The words an alert and an incident share, as evidence the ranking can weigh and a reason can name:
an identical title, the rare tokens (a version, a size, an exit or error code) that pin a problem down
better than any common word, and the words in common.

Linear in the texts: one pass of each pattern, set lookups after.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .lexical import terms

# Rare tokens: 4.12 / 1.24.3 (versions), 512Mi / 2GB (sizes), and the number after an exit, error or
# status word (exit code 137, HTTP 503, errno 28, signal 9).
_VERSION = re.compile(r"(?<![\w.])\d+\.\d+(?:\.\d+){0,3}(?![\w.])")
_SIZE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ki|mi|gi|ti|kib|mib|gib|tib|kb|mb|gb|tb)(?!\w)", re.I)
_CODE = re.compile(
    r"\b(?:exit(?:ed)?(?: with)?(?: code| status)?|code|status|error|errno|signal|http)\s*:?\s*(\d{2,5})\b", re.I
)
_SPACE = re.compile(r"\s+")


def rare_tokens(text: str) -> list[str]:
    """The versions, sizes and codes `text` holds, normalised (lower case, no space inside a size)."""
    found = [m.group().lower() for m in _VERSION.finditer(text)]
    found += [m.group().lower().replace(" ", "") for m in _SIZE.finditer(text)]
    found += [m.group(1) for m in _CODE.finditer(text)]
    return list(dict.fromkeys(found))


def title_key(text: str) -> str:
    """A title as compared: lower case, one space between words, no trailing punctuation."""
    return _SPACE.sub(" ", text.lower()).strip(" .!")


@dataclass(frozen=True)
class Wording:
    """What of the alert's wording ranking looks for in each candidate."""

    title: str = ""  # the alert's text as a title key
    rare: tuple[str, ...] = ()
    words: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, text: str) -> Wording:
        return cls(title_key(text), tuple(rare_tokens(text)), frozenset(terms(text)))

    def same_title(self, title: str | None) -> bool:
        return bool(self.title) and bool(title) and title_key(title or "") == self.title

    def rare_in(self, text: str | None) -> list[str]:
        """The alert's rare tokens this text holds too, as whole tokens."""
        if not self.rare or not text:
            return []
        theirs = set(rare_tokens(text)) | set(terms(text))
        return [t for t in self.rare if t in theirs]

    def common(self, text: str | None, *, most: int = 6) -> list[str]:
        """Up to `most` words both hold, the longest (the least common, as a rule) first."""
        if not self.words or not text:
            return []
        return sorted(self.words & set(terms(text)), key=lambda w: (-len(w), w))[:most]
