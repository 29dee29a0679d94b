"""A vendor named anywhere on a line makes a long random token beside it a secret, whether or not any rule
knows that vendor's token (issue 81): "paged: numverify webhook retries exhausted; the value we rotated
after was 8f1b…" names no credential word and fits no rule, and on-call text says it that way.

The vendors are the ones secret scanners know (`vendor_names.txt`, written by `python -m bench.redaction.vendor_names`
from Kingfisher's and gitleaks' rules), less names that are English words. The token is judged by its shape:

- **random letters and digits**: a part of 16 characters or more that mixes them, as varied as a key
  (10 distinct characters, 3.3 bits a character) and not a name made of words;
- **a key in groups** (`xk29ab-82mm31-q8z0pp`): three parts or more, every one mixing letters and digits;
- **hex** only where the line also says a credential was there ("the value we rotated", "revoked", "key"):
  hex alone is a trace id, a commit or a checksum, and stays one.

Never a UUID, a digest (`sha256:…`), a path, a URL or an address, nor, unless the line says a credential,
what the words before it call an id (`trace 01hx…`, `event 7a2b…`). Linear: one RE2 pass finds the names, each
hit reads its line (at most `REACH` characters either side), and overlapping lines are read once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import re2

from .base import Detector, Span, compile_re2
from .entropy import mostly_words, shannon_bits
from .nearby import _DIGEST, _HEXISH, _NAMED, _PARTS, _TOKEN, _UUID, _lines

NAMES_FILE = Path(__file__).with_name("vendor_names.txt")
MIN_LENGTH = 20  # characters of a token taken for a secret on a vendor's name alone
MIN_RANDOM_PART = 16
MIN_DISTINCT = 10
MIN_BITS = 3.3  # bits a character: random lower case and digits give 4 and more at 16 characters

# The line says a credential stood there (what makes hex one).
_TOLD = re.compile(
    r"(?i)\b(?:value|rotat\w*|revok\w*|leak\w*|expos\w*|regenerat\w*|compromis\w*|credentials?|keys?|tokens?|auth\w*|"
    r"secrets?|passw\w*|api[_-]?keys?)\b"
)
# ... or names what hex usually is there.
_CHECKSUM = re.compile(r"(?i)\b(?:commit|sha\d*|digest|checksum|hash|md5|etag|revision|trace|span|request[_-]?id)\b")
# A token the words right before it call an id (`trace 01hx9y…`, `event 7a2b…`, `message SM3f…`): a vendor's
# object, not its key, unless the line also says a credential stood there.
_ID_BEFORE = re.compile(
    r"(?i)\b(?:trace|span|event|message|msg|request|req|run|job|build|uid|sid|ulid|deployment|deploy|alert|"
    r"incident|ticket|issue|commit|revision|digest|checksum|integrity|operation|order|invoice|correlation|"
    r"transaction|txn|snapshot|release|instance|node|pod|container|cluster|droplet|volume|object|record)"
    r"(?:[ _-]?ids?)?[ \t]*[:=#]?[ \t]*$"
)


@cache
def vendor_names() -> tuple[str, ...]:
    lines = NAMES_FILE.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@cache
def names_regex() -> str:
    """One pattern for every name: whole at its start (`numverify-client` names numverify, `xnumverify`
    does not), followed by anything but a letter."""
    alternation = "|".join(re.escape(n) for n in sorted(vendor_names(), key=len, reverse=True))
    return rf"(?i)(?:^|[^a-z0-9])(?:{alternation})(?:[^a-z]|$)"


@cache
def _names() -> re2._Regexp:
    return compile_re2(names_regex())


def _letters_and_digits(part: str) -> bool:
    return any(c.isalpha() for c in part) and any(c.isdigit() for c in part)


def _switches(part: str) -> int:
    """How often it switches between letters and digits."""
    kinds = [c.isdigit() for c in part]
    return sum(1 for a, b in zip(kinds, kinds[1:]) if a != b)


def random_part(part: str) -> bool:
    """A part as random as a key: long, letters with digits (not hex alone), varied, and not words. In one
    case only, runs of letters are no sign of words (a random lower-case key is full of them): there, its
    digits must break it up four times or more, as they do a key's (`shwc7ighlfw9fcoul7…`) and not a
    name's (`nodepool2`, `k8sclusterprod`)."""
    if not (
        len(part) >= MIN_RANDOM_PART
        and _letters_and_digits(part)
        and not _HEXISH.fullmatch(part)
        and len(set(part)) >= MIN_DISTINCT
        and shannon_bits(part) >= MIN_BITS
    ):
        return False
    if part == part.lower() or part == part.upper():
        return _switches(part) >= 4
    return not mostly_words(part)


def secret_shaped(token: str, *, told: bool, checksums: bool) -> bool:
    """Is `token`, on a line naming a vendor, a secret by its shape? (`told`: the line says a credential stood
    there; `checksums`: it names a commit, a digest or a trace.)"""
    core = token.strip("=.")
    if len(core) < MIN_LENGTH or "://" in core or "@" in core or core.startswith("/") or core.count("/") > 1:
        return False
    if _DIGEST.match(core) or _UUID.search(core):
        return False
    if _HEXISH.fullmatch(core):
        digits = core.replace("-", "")
        return told and not checksums and len(digits) >= MIN_LENGTH and len(set(digits.lower())) >= MIN_DISTINCT
    parts = _PARTS.findall(core)
    if any(random_part(p) for p in parts):
        return True
    groups = [p for p in parts if len(p) >= 4 and _letters_and_digits(p) and not _HEXISH.fullmatch(p)]
    return len(parts) >= 3 and len(groups) == len(parts) and not mostly_words(core)


def _named_tokens(text: str) -> Iterator[Span]:
    for start, end in _lines(text, (m.span() for m in _names().finditer(text))):
        line = text[start:end]
        told, checksums = _TOLD.search(line) is not None, _CHECKSUM.search(line) is not None
        for t in _TOKEN.finditer(line):
            token, at = t.group(), t.start()
            while (named := _NAMED.match(token)) is not None:  # `OTLP_HEADERS=x-team=…`: the value alone
                token, at = token[named.end() :], at + named.end()
            if not told and _ID_BEFORE.search(line, max(0, t.start() - 40), t.start()):
                continue
            if secret_shaped(token, told=told, checksums=checksums):
                yield start + at, start + t.end()


# No trigger or keywords: the names are read from their file at the first scan (the catalogue's warm-up),
# not at import, and the one RE2 pass over the names is the gate.
VENDOR_NAMED = Detector("a random token on a line naming its vendor", _named_tokens)
