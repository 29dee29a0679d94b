"""A token with no known shape and no context, found by its randomness: long, mixed-case with digits, and
as varied as random base64.

What random-looking text in on-call notes mostly is, and is kept: hex (trace and request ids, checksums,
commit and image digests: one case, so never "mixed"); ids of 20 characters or fewer (PagerDuty's 14, a
status page's 20); names made of words (`DFSClient_NONMAPREDUCE_1537864556_1`, `outage-postmortem-586b19`),
which random base64 almost never is; and paths (`/subscriptions/…/resourceGroups/…`, `com/incidents/…`),
where each segment is judged alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

from .base import Detector, Span, compile_re2

MIN_LENGTH = 24
# detect-secrets' limit for base64 is 4.5 bits a character, which random base64 reaches only from about 32
# characters on (24 random characters hold about 20 distinct ones: 4.2 bits). Below 32 the limit is half
# a bit under the most a token of that length can have.
MAX_BITS_LIMIT = 4.5


def min_bits(length: int) -> float:
    return min(MAX_BITS_LIMIT, math.log2(length) - 0.5)


_RUN_REGEX = r"[A-Za-z0-9+/_-]{24,}={0,2}"
# Maximal runs: no boundary checks needed. Python's `re`, not RE2, for this one pattern, as for base64's
# candidates (`context._B64_CANDIDATE`): a run of one character class then at most two "=", which `re` also
# matches in linear time (from any start it reads one run, at most 23 characters when it fails), at a
# seventh of the cost per match of RE2's Python layer. A storm's ids are each a candidate: 20,000 of them
# (10,000 pods' uids and descriptions) 137 -> 18 ms, the same spans.
_RUN = re.compile(_RUN_REGEX)
_PART = compile_re2(r"[^/_.=+-]+")
# A part that is a word: lower case, Capitalised, UPPER or CamelCase, four letters or more. A part of random
# base64 is rarely all letters of one pattern, and two such parts in one token almost never.
_WORD = compile_re2(r"[a-z]{4,}|[A-Z][a-z]{3,}|[A-Z]{4,}|[A-Z]+[a-z]{3,}(?:[A-Z][a-z]+)*|[a-z]+(?:[A-Z][a-z]+)+")
# Runs of letters that read as words inside one part (`IO80211AWDLPeerManager`): in random base64 they
# cover a twentieth of a token on average; in an identifier, half or more.
_LETTERS = re.compile(r"[A-Za-z]+")
_HUMP = re.compile(r"[A-Z]*[a-z]*")  # one CamelCase hump: capitals, then lower case (each a maximal run)
SEPARATORS = frozenset("_-./:+=@ \t")


def word_letters(token: str) -> int:
    """How many of `token`'s letters read as words: a lower-case word of three letters or more (with its
    capital: `Peer`), an acronym before one (`AWDL` in `AWDLPeer`), and a run of four capitals or more that
    stands alone between separators (`_NONMAPREDUCE_`). A run of capitals between digits or lower-case
    letters (`7JQFOQ2`, `xLGHHk`) is what random base64 is full of, and no word: counting it read a
    64-character key as "mostly words" and let it through. Linear: each letter is read once."""
    covered = 0
    for run in _LETTERS.finditer(token):
        letters, start, end = run.group(), run.start(), run.end()
        alone = (start == 0 or token[start - 1] in SEPARATORS) and (end == len(token) or token[end] in SEPARATORS)
        if letters.isupper():
            covered += len(letters) if alone and len(letters) >= 4 else 0
            continue
        for hump in _HUMP.finditer(letters):
            word = hump.group()
            capitals = len(word) - len(word.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
            lower = len(word) - capitals
            if lower >= 3:
                covered += lower + min(capitals, 1) + (capitals - 1 if capitals >= 4 else 0)
            elif lower == 0 and capitals >= 4 and hump.end() == len(letters) and alone:
                covered += capitals  # `fooHTTP_`: a trailing acronym at a separator
    return covered


def mostly_words(token: str) -> bool:
    """Half or more of it reads as words (`NewsDetailXWebActivity`): a name, not a random token."""
    return 2 * word_letters(token) >= len(token)


def shannon_bits(token: str) -> float:
    """Bits of entropy per character of `token`."""
    counts, n = Counter(token), len(token)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(token: str) -> bool:
    token = token.rstrip("=")
    if len(token) < MIN_LENGTH:
        return False
    has_digit = any(c.isdigit() for c in token)
    mixed = token != token.lower() and token != token.upper()
    if not (has_digit and mixed):
        return False
    if mostly_words(token):
        return False  # an identifier
    if len(token) < 40 and sum(1 for part in _PART.finditer(token) if _WORD.fullmatch(part.group())) >= 2:
        return False  # a short name of two words and an id (a long random token holds word-like parts too)
    return shannon_bits(token) >= min_bits(len(token))


def _random_tokens(text: str) -> Iterator[Span]:
    for match in _RUN.finditer(text):
        token, start = match.group(), match.start()
        # In a path or a host name's tail (`com/incidents/…`): each segment on its own. Base64, which holds
        # "/" too, stands after a space, a quote or an "=", not after "." or "/".
        if "/" in token and (token.startswith("/") or start and text[start - 1] in "./"):
            for segment in token.split("/"):
                if looks_random(segment):
                    yield start, start + len(segment)
                start += len(segment) + 1
        elif looks_random(token):
            yield match.span()


# The gate runs it only on a text holding a run long enough to be a token.
HIGH_ENTROPY = Detector("high-entropy token", _random_tokens, trigger=_RUN_REGEX)
