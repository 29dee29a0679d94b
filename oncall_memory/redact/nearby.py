"""Secrets told by what stands near them rather than right before them (issue 51): a vendor's name on the
line (`ERROR numverify-client request rejected status=403 retries=3 key=…`), a credential word a few words
back ("the key we rotated after the incident was …"), and the other half of a pair one of whose halves was
found (an access key id and its secret).

- **A vendor's token by its vendor's name.** The maintained catalogue's keyword-gated rules (Betterleaks' in
  `kingfisher-secret-scanner`: a vendor's name, then at most twenty characters and an `=` or `:`, then a
  token of the vendor's shape) are read from the installed catalogue and used as their authors meant
  them, gated on the keyword, but with the keyword anywhere on the line: on-call text writes the name in
  a client's name, a sentence or a table cell, and the token after a bare `key=`, or after no word at all.
- **A credential word a few words back.** After "credential", "key", "token", "secret" or "password",
  within six words, the first word that has a credential's shape (letters and digits, long enough; hex and
  UUIDs too, which alone are kept as trace ids).
- **The other half.** Next to a secret found by any detector, on its line, a token as random as a secret is
  one too (`AKIA…` and its 40-character secret; a client id and its secret).

All three scan in time linear in the text: one pass finds the words (an RE2 set for the vendors' names, an
alternation of words for the credential words), each hit reads at most a line (`REACH` characters either
side), and lines that overlap are read once.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Iterator
from functools import cache
from itertools import accumulate
from typing import Any

import re2

from . import vendor_rules
from .base import Detector, Span, compile_re2
from .catalogue import CONFIDENCE
from .entropy import mostly_words, shannon_bits

REACH = 240  # characters either side of a vendor's name or a found secret that are read
WORDS_BACK = 6  # words between a credential word and its value
# Tokens are read from bounded slices of the text (a line around a hit) with the standard library's engine:
# the pattern has no nested repeats, so each slice is read once, and slicing costs what the slice is long.
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9+/_=.:-]*[A-Za-z0-9=]")
_EDGE = "\"'`()[]{}<>,;"

# -- a vendor's token by its vendor's name -------------------------------------------------------------

# The shape of Betterleaks' keyword-gated rules: `(?i)(?:vendor|alias)` then up to twenty characters, an
# assignment and the token as group 1.
_GATED = re.compile(
    r"^\(\?i\)(?:\\b)?\(\?:(?P<kw>[^()]+)\)\(\?:\[ \\t\\w\.-\]\{0,20\}\)\[\\s'\"\]\{0,3\}\(\?:=\|>\|:\{1,3\}=\|"
    r"\\\|\\\|\|:\|=>\|\\\?=\|,\)\[\\x60'\"\\s=\]\{0,5\}\((?P<tok>.+?)\)\(\?:"
)
# Keywords that are everyday words: with a generic shape after them, ordinary text would match. Their
# rules still run in the catalogue itself, with the assignment they need there.
_EVERYDAY = frozenset({"key", "secret", "password", "box", "linear", "paradigm", "lighton", "mid", "woo", "stability"})
_lock = threading.Lock()


MIN_NAME = 4  # characters: a shorter vendor name is a fragment of words
READ_BY = vendor_rules.reading(CONFIDENCE, _GATED.pattern, sorted(_EVERYDAY), MIN_NAME)


def _rules() -> list[tuple[str, str]]:
    """(keyword alternation, token shape) of every keyword-gated rule the installed catalogue has: as shipped
    for its version (`vendor_rules`), else read from it."""
    from .catalogue import catalogue_version

    return vendor_rules.shipped(catalogue_version(), READ_BY) or derived_rules()


def derived_rules() -> list[tuple[str, str]]:
    """The same, read from the loaded catalogue rule by rule."""
    from .catalogue import loaded

    rules: Any = loaded().rules
    out = []
    for meta in rules.metadata():
        pattern = rules.detail(meta["id"])["pattern"]
        found = _GATED.match(pattern)
        if found is None:
            continue
        names = [k for k in found["kw"].split("|") if k.lower() not in _EVERYDAY and len(k) >= MIN_NAME]
        if names:
            out.append(("|".join(names), found["tok"]))
    return out


def vendor_table() -> tuple[Any, list[tuple[Any, Any]]]:
    with _lock:  # built once, even when the first scans arrive together (as the catalogue is, `loaded`)
        return _built_vendor_table()


@cache
def _built_vendor_table() -> tuple[Any, list[tuple[Any, Any]]]:
    """One RE2 set of every vendor name, and for each name its rule's (name regex, whole-token shape)."""
    names = re2.Set.SearchSet(re2.Options())
    table = []
    for keywords, shape in _rules():
        names.Add(f"(?i){keywords}")
        # The shape, case-insensitive as the rule is, and whole: nothing of a token's alphabet either side.
        table.append(
            (
                compile_re2(f"(?i){keywords}"),
                compile_re2(rf"(?i)(?:^|[^A-Za-z0-9_+/=-])({shape})(?:$|[^A-Za-z0-9_+/=-])"),
            )
        )
    names.Add(r"\A\z")
    names.Compile()
    return names, table


def _line(text: str, start: int, end: int) -> tuple[int, int]:
    """The line around [start, end), at most REACH characters either side."""
    left = text.rfind("\n", max(0, start - REACH), start)
    right = text.find("\n", end, end + REACH)
    return (left + 1 if left != -1 else max(0, start - REACH)), (right if right != -1 else min(len(text), end + REACH))


def _lines(text: str, hits: Iterator[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The lines around hits (in order), overlapping ones merged: a name or a secret repeated a million
    times is read once, not once per hit."""
    merged: tuple[int, int] | None = None
    for a, b in hits:
        start, end = _line(text, a, b)
        if merged is not None and start <= merged[1]:
            merged = (merged[0], max(merged[1], end))
            continue
        if merged is not None:
            yield merged
        merged = (start, end)
    if merged is not None:
        yield merged


def _plausible(token: str) -> bool:
    """Not a placeholder or a word: varied, with a digit or mixed case."""
    body = [c for c in token if c.isalnum()]
    if len(set(c.lower() for c in body)) < 5:
        return False
    return any(c.isdigit() for c in token) or (token != token.lower() and token != token.upper())


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# What makes a UUID on a vendor's line its key rather than one of its objects' ids (an Opsgenie alert's).
_SAYS_CREDENTIAL = re.compile(r"(?i)\b(?:credentials?|keys?|tokens?|secrets?|passw\w*|apikey|auth\w*)\b")


def _vendor_tokens(text: str) -> Iterator[Span]:
    names, table = vendor_table()
    hits = names.Match(text) or ()
    for i in hits:
        if i >= len(table):
            continue
        name, shape = table[i]
        for start, end in _lines(text, (m.span() for m in name.finditer(text))):
            line = text[start:end]
            for t in shape.finditer(line):
                a, b = t.span(1)  # google-re2 takes group numbers only; the token is the first
                if not _plausible(t.group(1)):
                    continue
                if _UUID.fullmatch(t.group(1)) and not _SAYS_CREDENTIAL.search(line):
                    continue  # `opsgenie alert 8f3c2b1a-…`: an object's id, kept as UUIDs are
                yield start + a, start + b


VENDOR_NEARBY = Detector("a vendor's token by its vendor's name on the line", _vendor_tokens)

# -- a credential word a few words back ----------------------------------------------------------------

# The standard library's engine: an alternation of words with no repeats inside is linear there too, and its
# matches cost a tenth of RE2's wrapper's when a stranger repeats the word.
_CREDENTIAL_WORD = re.compile(
    r"(?i)\b(?:credentials?|api[ _-]?keys?|access[ _-]?keys?|keys?|tokens?|secrets?|passwords?|passphrase)\b"
)
_HEXISH = re.compile(r"[0-9a-fA-F-]+")
_NAMED = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*[=:](?=[A-Za-z0-9])")  # a setting's name and its `=` or `:`


_PARTS = re.compile(r"[^:._/-]+")
# A digest or a fingerprint names what it hashes (`sha256:…`, `SHA256:…` in ssh's fingerprints): an id.
_DIGEST = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)|md5):")


def _wordy(part: str) -> bool:
    """Half or more of it reads as words (`NewsDetailXWebActivity`): a name, not a random token."""
    return mostly_words(part)


def _switches(part: str) -> int:
    """How often it switches between letters and digits (`a1b2` three times, `user12345` once)."""
    kinds = [c.isdigit() for c in part if c.isalnum()]
    return sum(1 for a, b in zip(kinds, kinds[1:]) if a != b)


def _letters(part: str) -> int:
    return sum(1 for c in part if c.isalpha())


def credential_shaped(token: str) -> bool:
    """What follows a credential word is its value when it has a credential's shape: 20 characters or more of
    letters and digits; 12 or more that switch between them twice (`lV9ASPsd2P3d`); 16 or more of mixed case
    that do not read as words. A name built of words and numbers (`user:12345:profile`, `orders-db-2`,
    `jobTokenSecretManager`) is not one, nor a digest (`sha256:…`), nor a time (`2026-01-09T03:22:00Z`: one
    letter to a part, where a key in groups has two or more)."""
    core = token.strip("=")
    if len(core) < 12 or not _plausible(core) or "://" in core or core.count("/") > 2 or _DIGEST.match(core):
        return False
    parts = _PARTS.findall(core)
    if len(core) >= 20 and sum(1 for p in parts if _switches(p) >= 1 and _letters(p) >= 2) >= 2 and not _wordy(core):
        return True  # `XYZ98765-WXYZ1234-KLMN5678-QRST9101`: a key in groups
    for part in parts:
        letters, digits = any(c.isalpha() for c in part), any(c.isdigit() for c in part)
        cases = part != part.lower() and part != part.upper()
        switches = _switches(part)
        if (
            letters
            and digits
            and (len(part) >= 20 or (len(part) >= 12 and (switches >= 3 or (switches == 2 and not _wordy(part)))))
        ):
            return True
        if len(part) >= 16 and cases and not _wordy(part) and shannon_bits(part) >= 3.5:
            return True
    return False


# "… the key we rotated was letmein42.": after a credential word, a verb that tells its value.
_TELLING = frozenset({"was", "is", "were", "are", "became", "becomes"})
_NEXT_WORD = re.compile(r"[ \t]+([^\s\"'`<>()\[\]{},;]+)")
_SEPARATED = re.compile(r"[A-Za-z0-9][-./][A-Za-z0-9]")  # `k8s-prod`, `v1.2.3`, `a/b`: a name or a path


def _told(window: str, at: int) -> Span | None:
    """The word after a telling verb at `at` when it reads as a credential's value (`was letmein42`, `is
    P@ssw0rd123`): 8 to 64 characters, letters with digits or symbols, varied, and not a name built with
    `-`, `.` or `/` (`k8s-prod`)."""
    word = _NEXT_WORD.match(window, at)
    if word is None:
        return None
    said, at = word.group(1).rstrip(".,:!?"), word.start(1)
    if (named := _NAMED.match(said)) is not None:  # `was signing_key=…`: the value alone
        said, at = said[named.end() :], at + named.end()
    letters = any(c.isalpha() for c in said)
    others = any(not c.isalpha() for c in said)
    if (
        8 <= len(said) <= 64
        and letters
        and others
        and _plausible(said)
        and not _SEPARATED.search(said)
        and not _DIGEST.match(said)
    ):
        return at, at + len(said)
    return None


# "key" names a credential only where nothing before or after makes it another kind of key: a registry or
# a database key, a cache or a partition key, a public or a host key, a key fingerprint.
_NOT_A_CREDENTIAL_BEFORE = re.compile(
    r"(?i)(?:\b|_)(?:registry|primary|foreign|partition|sort|cache|idempotency|shard|hash|public|host|row|object|lookup|"
    r"map|composite|unique|dedup|deduplication|grouping|group|message|event|bucket|index|sharding|range)[ _-]$"
)
_NOT_A_CREDENTIAL_AFTER = re.compile(r"(?i)[ _-](?:fingerprint|id|name|path|file|length|size|type|pair|ring|space)\b")


# A cache's key, however the sentence runs ("Cache restored from key: bazel-Linux-…", "cache miss for key …").
_CACHE_BEFORE = re.compile(r"(?i)cache")


def _names_a_credential(text: str, start: int, end: int) -> bool:
    if not text[start:end].lower().startswith("key"):
        return True
    line = max(text.rfind("\n", 0, start) + 1, start - 30)
    return not (
        _NOT_A_CREDENTIAL_BEFORE.search(text, max(0, start - 20), start)
        or _NOT_A_CREDENTIAL_AFTER.match(text, end)
        or _CACHE_BEFORE.search(text, line, start)
    )


def _after_credential_words(text: str) -> Iterator[Span]:
    words = [m.span() for m in _CREDENTIAL_WORD.finditer(text) if _names_a_credential(text, *m.span())]
    for i, (_, after) in enumerate(words):
        # Up to the next credential word (which reads on from there), so a word repeated is read once.
        until = min(len(text), after + 40 * (WORDS_BACK + 1), words[i + 1][0] if i + 1 < len(words) else len(text))
        newline = text.find("\n", after, until)
        window = text[after : newline if newline != -1 else until]  # the value is on the word's own line
        for seen, t in enumerate(_TOKEN.finditer(window)):
            if seen > WORDS_BACK:
                break
            if t.group().lower() in _TELLING and (said := _told(window, t.end())) is not None:
                yield after + said[0], after + said[1]
                break
            token, start = t.group(), t.start()
            if _DIGEST.match(token):
                continue  # `SHA256:…` names what it hashes: a fingerprint, not a setting's value
            if (named := _NAMED.match(token)) is not None:  # `signing_key=sk_live_…`: the value alone
                token, start = token[named.end() :], start + named.end()
            if _HEXISH.fullmatch(token):  # hex and UUIDs: an id alone, a credential after a credential word
                shaped = len(token.replace("-", "")) >= 16 and _plausible(token) and any(c.isdigit() for c in token)
            else:
                shaped = credential_shaped(token)
            if shaped:
                yield after + start, after + t.end()
                break


CREDENTIAL_NEARBY = Detector(
    "a credential-shaped word a few words after a credential word",
    _after_credential_words,
    frozenset({"credential", "key", "token", "secret", "password", "passphrase"}),
)

# -- the other half ------------------------------------------------------------------------------------


def _mixed_part(token: str) -> bool:
    """A part of eight characters or more that mixes letters with digits or cases: a random token has one,
    a name built of words and numbers (`calvisitor-10-105-162-178`, `ip-10-0-1-17`) has none."""
    for part in _PARTS.findall(token):
        if len(part) >= 8 and any(c.isalpha() for c in part):
            if any(c.isdigit() for c in part) or (part != part.lower() and part != part.upper()):
                return True
    return False


def companions(text: str, found: list[Span]) -> list[Span]:
    """Tokens on the line of a found secret (within REACH) as random as a secret's other half is: 16
    characters or more, letters and digits, 3.5 bits a character or more, and not hex (a request or trace
    id beside a secret stays one)."""
    found = sorted(found)
    starts = [a for a, _ in found]
    reach = list(accumulate((b for _, b in found), max))  # the furthest any secret so far reaches
    out = []
    for start, end in _lines(text, iter(found)):
        for t in _TOKEN.finditer(text[start:end]):
            s, e = start + t.start(), start + t.end()
            token = t.group().strip("=")
            if len(token) < 16 or _HEXISH.fullmatch(token) or _DIGEST.match(token) or "://" in token:
                continue  # hex, UUIDs and digests beside a secret are the request's ids, kept as ids are
            i = bisect_right(starts, s) - 1
            if (i >= 0 and reach[i] > s) or (i + 1 < len(starts) and starts[i + 1] < e):
                continue  # a secret already, or part of one
            letters, digits = any(c.isalpha() for c in token), any(c.isdigit() for c in token)
            if letters and digits and shannon_bits(token) >= 3.5 and not _wordy(token) and _mixed_part(token):
                out.append((s, e))
    return out
