"""The words an alert and an incident share, as evidence the ranking can weigh and a reason can name:
an identical title, the rare tokens (a version, a size, an exit or error code) that pin a problem down
better than any common word, and the words in common.

Linear in the texts: one pass of each pattern, set lookups after. A candidate's words are read from the
term ids its payload carries (`terms`, the indices of its sparse vector) when it has them, so ranking 50
candidates does not tokenise 50 texts again (3.3 ms of a 100,000-incident lookup did).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from ..domain.lexical import term_index, terms

# Rare tokens: 4.12 / 1.24.3 (versions), 512Mi / 2GB (sizes), and the number after an exit, error or
# status word (exit code 137, HTTP 503, errno 28, signal 9).
_VERSION = re.compile(r"(?<![\w.])\d+\.\d+(?:\.\d+){0,3}(?![\w.])")
_SIZE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ki|mi|gi|ti|kib|mib|gib|tib|kb|mb|gb|tb)(?!\w)", re.I)
# One run of spaces then an optional colon and its own: written `\s*:?\s*`, the two runs split a stranger's
# "error" and 32,768 spaces every way (minutes).
_CODE = re.compile(
    r"\b(?:exit(?:ed)?(?: with)?(?: code| status)?|code|status|error|errno|signal|http)\s*(?::\s*)?(\d{2,5})\b", re.I
)
_ANCHOR = re.compile(r"[\d.]+")  # every rare token starts with one
_TAG_CHARS = 24  # a leading "[...]" longer than this is text, not a tag
_MAX_TAGS = 4


def rare_tokens(text: str) -> list[str]:
    """The versions, sizes and codes `text` holds, normalised (lower case, no space inside a size)."""
    found = [m.group().lower() for m in _VERSION.finditer(text)]
    found += [m.group().lower().replace(" ", "") for m in _SIZE.finditer(text)]
    found += [m.group(1) for m in _CODE.finditer(text)]
    return list(dict.fromkeys(found))


def title_key(text: str) -> str:
    """A title as compared: lower case, one space between words, no trailing punctuation, and no leading
    bracketed tags ("[Bug]:", "[P1]", "[FIRING:2]"): the template's or the pager's ceremony, not the problem."""
    key = " ".join(text.lower().split()).strip(" .!")  # split() parts at what \s matches
    start = 0  # an index, not slices: a text of a million tags costs one pass, not a million copies
    for _ in range(_MAX_TAGS):
        end = key.find("]", start, start + _TAG_CHARS) if key.startswith("[", start) else -1
        if end < 0:
            break
        start = end + 1
        while start < len(key) and key[start] in " :-":
            start += 1
    return key[start:]


def headline(text: str) -> str:
    """An alert's first line: its title, when details follow."""
    return text.strip().split("\n", 1)[0]


@dataclass(frozen=True)
class Wording:
    """What of the alert's wording ranking looks for in each candidate."""

    # The alert's text and its headline (first line) as title keys: an alert that fires again reads as the
    # incident's title, whole or as the first line of its details.
    titles: frozenset[str] = frozenset()
    rare: tuple[str, ...] = ()
    words: frozenset[str] = field(default_factory=frozenset)
    ids: dict[str, int] = field(default_factory=dict)  # each word and rare token -> its term id
    # Each rare token's leading digits and dots, which a text holding it holds as they are (case and the
    # space inside a size aside): a text holding none of them is spared the patterns' pass.
    anchors: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, text: str) -> Wording:
        rare, words = tuple(rare_tokens(text)), frozenset(terms(text))
        anchors = {t: m.group() for t in rare if (m := _ANCHOR.match(t))}
        titles = frozenset(k for k in (title_key(text), title_key(headline(text))) if k)
        return cls(titles, rare, words, {w: term_index(w) for w in (*words, *rare)}, anchors)

    def same_title(self, title: str | None) -> bool:
        return bool(self.titles) and bool(title) and title_key(title or "") in self.titles

    def rare_in(self, text: str | None, term_ids: Collection[int] | None = None) -> list[str]:
        """The alert's rare tokens this text holds too, as whole tokens (a version or size by the pattern; a
        code, also a word, by the text's term ids when given)."""
        if not self.rare or not text:
            return []
        # A token among the text's term ids is held: no pattern needs to say so. The patterns run over the
        # text only for the others, and only when it holds one of their anchors (a ranked lookup read 50
        # candidates' texts with all three patterns whenever the alert named an exit code: 2 ms of its 4).
        held = set() if term_ids is None else {t for t in self.rare if self.ids[t] in term_ids}
        if len(held) == len(self.rare):
            return list(self.rare)
        if any(self.anchors.get(t, "") in text for t in self.rare if t not in held):
            held.update(rare_tokens(text))
        if term_ids is None:
            held.update(terms(text))
        return [t for t in self.rare if t in held]

    def common(
        self,
        text: str | None,
        *,
        term_ids: Collection[int] | None = None,
        most: int = 6,
        rarity: Mapping[int, float] | None = None,
    ) -> list[str]:
        """Up to `most` words both hold: the rarest first by `rarity` (term id to weight, what ranking
        weighed them by), else the longest (the least common, as a rule). With the text's term ids, by them
        (no tokenising; a 31-bit hash collision could add a word, about 1 in 10^8)."""
        if not self.words or not text:
            return []
        if term_ids is None:
            shared: set[str] | frozenset[str] = self.words & set(terms(text))
        else:
            shared = {w for w in self.words if self.ids[w] in term_ids}
        weight = rarity or {}
        return sorted(shared, key=lambda w: (-weight.get(self.ids[w], 0.0), -len(w), w))[:most]
