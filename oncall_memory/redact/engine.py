"""Finding and replacing secrets in one text: every detector over the text (those whose keywords it
holds), again over its unfolded form when it has one, the spans merged and each replaced by a marker.

Every character is scanned, however long the text: a long text is read in windows of `WINDOW` characters
that overlap by `OVERLAP` (longer than any secret a detector finds, a PEM private key included), so a
secret anywhere is whole in one window, and the cost per character is bounded by the window, not by the
text: linear. (The body size limit bounds the whole.) Only then is a field cut to `MAX_FIELD_CHARS` for
keeping: what is cut was scanned too, so a secret past the cut can never ride along in a copy made
before it.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass
from functools import partial

import re2

from .base import Detector, Span, merge
from .catalogue import CATALOGUE, loaded
from .context import CONTEXT
from .entropy import HIGH_ENTROPY
from .named import VENDOR_NAMED, names_regex
from .nearby import CREDENTIAL_NEARBY, VENDOR_NEARBY, companions, vendor_table
from .ops_syntaxes import OPS
from .public import OVERRIDABLE, inside, public_spans
from .scan_process import Child, fork
from .tool_output import TOOL_OUTPUT
from .unfold import unfold
from .vendors import VENDORS

MARKER = "[REDACTED]"
COMPANION = "the other half of a secret found beside it"
# One field of an incident or alert is cut here before it is scanned (64 Ki characters: far past what the
# embedded text uses, and enough for a pasted stack trace); the cut is marked, with how much went.
MAX_FIELD_CHARS = 65_536
WINDOW = 32_768  # characters per scan window of a long text ...
OVERLAP = 8_192  # ... of which this many are read again by the next (an RSA-4096 PEM key is ~3,300)

DETECTORS: list[Detector] = [
    *VENDORS,
    *CONTEXT,
    *OPS,
    *TOOL_OUTPUT,
    HIGH_ENTROPY,
    CATALOGUE,
    VENDOR_NEARBY,
    CREDENTIAL_NEARBY,
    VENDOR_NAMED,
]
# The unfolded text joins what a line break or an invisible character separated: a shape or a context
# makes a secret there, randomness alone does not (an id at a line's end joined with the next line's first
# word would look random).
UNFOLDED_DETECTORS = [d for d in DETECTORS if d is not HIGH_ENTROPY]


@dataclass(frozen=True)
class _Gate:
    """Which detectors a text calls for, found in two linear passes: one RE2 set of every pattern
    detector's own regex (over the text), one of every keyword (over the text in lower case). A detector
    with neither always runs."""

    triggers: re2.Set
    triggered: list[int]  # set index -> detector index
    keywords: re2.Set
    called_by: list[frozenset[int]]  # keyword set index -> the detectors that keyword calls for
    always: frozenset[int]  # the detectors with neither a trigger nor keywords

    def detectors(self, text: str, detectors: list[Detector]) -> list[Detector]:
        # (The last pattern of each set is the placeholder every set needs; it matches only empty text.)
        chosen = set(self.always)
        chosen.update(self.triggered[i] for i in self.triggers.Match(text) or () if i < len(self.triggered))
        for i in self.keywords.Match(text.lower()) or ():
            if i < len(self.called_by):
                chosen |= self.called_by[i]
        return [detectors[i] for i in sorted(chosen)]


_GATES: dict[int, tuple[list[Detector], _Gate]] = {}


def _gate_of(detectors: list[Detector]) -> _Gate:
    # One gate per list of detectors (the module's two; a test's own), built on first use.
    cached = _GATES.get(id(detectors))
    if cached is None or cached[0] is not detectors:
        cached = _GATES[id(detectors)] = (detectors, _gate(tuple(detectors)))
    return cached[1]


def _gate(detectors: tuple[Detector, ...]) -> _Gate:
    options = re2.Options()
    options.max_mem = 256 << 20
    triggers, triggered = re2.Set.SearchSet(options), []
    for i, d in enumerate(detectors):
        if d.trigger:
            triggers.Add(d.trigger)
            triggered.append(i)
    keyword_of = sorted(frozenset().union(*(d.keywords for d in detectors if not d.trigger)))
    keywords = re2.Set.SearchSet(options)
    for keyword in keyword_of:
        keywords.Add(re.escape(keyword))
    for compiled in (triggers, keywords):
        compiled.Add(r"\A\z")  # an RE2 set needs one pattern at least
        compiled.Compile()
    called_by = [
        frozenset(i for i, d in enumerate(detectors) if not d.trigger and keyword in d.keywords)
        for keyword in keyword_of
    ]
    always = frozenset(i for i, d in enumerate(detectors) if not d.trigger and not d.keywords)
    return _Gate(triggers, triggered, keywords, called_by, always)


def cap(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """`text` cut to `limit` characters, the cut marked with how many characters it removed."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut: {len(text) - limit} more characters]"


def _masked(value: str) -> bool:
    """A placeholder in a secret's shape (`ghp_xxxxxxxx…`, `glc_1111…`, `xoxb-xxxxxxxxx-xxxxxxxxxx`): past
    its first four characters (a vendor's prefix), one letter or digit repeated. No real token is."""
    body = [c.lower() for c in value[4:] if c.isalnum()]
    return len(body) >= 8 and len(set(body)) == 1


def _spans(text: str, detectors: list[Detector]) -> list[tuple[Span, str]]:
    found = [
        (span, d.name)
        for d in _gate_of(detectors).detectors(text, detectors)
        for span in d.find(text)
        if not _masked(text[span[0] : span[1]])
    ]
    if any(name in OVERRIDABLE or name == CATALOGUE.name for _, name in found):
        public = public_spans(text)
        found = [
            (span, name)
            for span, name in found
            if not (public and (name in OVERRIDABLE or name == CATALOGUE.name) and inside(span, public))
        ]
    return found


def _scan_window(text: str) -> list[tuple[Span, str]]:
    found = _spans(text, DETECTORS)
    if (unfolded := unfold(text)) is not None:
        found += [(unfolded.original(span), name) for span, name in _spans(unfolded.text, UNFOLDED_DETECTORS)]
    if found:  # a secret's other half stands beside it (an access key id and its secret)
        found += [(span, COMPANION) for span in companions(text, [span for span, _ in found])]
    return found


def windows(length: int, window: int = WINDOW, overlap: int = OVERLAP) -> list[int]:
    """Where each scan window of a text of `length` characters starts: one window for a short text; for a
    long one, every `window - overlap` characters, the last ending at the text's end."""
    if length <= window:
        return [0]
    step = window - overlap
    starts = list(range(0, length - window, step))
    return [*starts, length - window]


def scan(text: str) -> list[tuple[Span, str]]:
    """Every secret found anywhere in `text`, as (span, detector name), in text order (a secret in two
    windows' overlap is listed twice: callers merge spans). Linear in the text, however long (the property
    test in `tests/test_redact.py` holds it to that). In the scanning child when one was started
    (`scan_in_child`)."""
    if _child is not None:
        return _child.scan(text)
    return _scan_here(text)


def _scan_here(text: str) -> list[tuple[Span, str]]:
    found = []
    for start in windows(len(text)):
        part = text[start : start + WINDOW]
        found += [((a + start, b + start), name) for (a, b), name in _scan_window(part)]
    return sorted(set(found))


def load_in_background(*, scan_once: bool = False) -> threading.Thread:
    """Start loading the catalogue on another thread, for a command that will redact soon: Kingfisher
    releases the GIL while it loads, so the 0.4 s overlaps the imports and the store's opening (a CLI
    lookup 1.5 s -> 1.1 s); then the table of vendors' names (from the rules shipped for this version,
    `vendor_rules`: 0.02 s, not the 0.07 s of reading them from the catalogue). `scan_once`: then scan one
    line, so that what the first scan builds (the detectors' RE2 sets) is built too: for the service, whose
    first alert after a start otherwise waited for all of it (a 1,000-alert post's 202 in 0.41-0.58 s, not
    0.03 s). Returns the thread. A failure here is left for the first real use to report."""

    def load() -> None:
        try:
            warm(scan_once=scan_once)
        except Exception:  # noqa: BLE001 - reported by the first scan, which loads again
            pass

    loading = threading.Thread(target=load, name="secret-catalogue", daemon=True)
    loading.start()
    return loading


def warm(*, scan_once: bool = False) -> None:
    """Load the catalogue, then the tables of vendors' names (the catalogue's and `named`'s), and with
    `scan_once` scan one line so that what the first scan builds (the detectors' RE2 sets) is built too
    (`load_in_background`, and the scanning child of `scan_in_child`)."""
    loaded()
    vendor_table()  # ready before the first scan asks
    names_regex()
    if scan_once:
        scan("warming up: a password=<placeholder> beside a token\nsplit over two lines")


_child: Child | None = None


def scan_in_child() -> bool:
    """For a one-shot command that redacts soon after it starts (a standalone `similar`): fork a child that
    loads everything scanning needs (the catalogue, the vendors' table, the detectors' sets) on the other
    core and then scans for this process (`scan_process.py`). False where that cannot be done safely here (the
    caller loads on a thread instead, `catalogue.load_in_background`)."""
    global _child
    if _child is None:
        # In the child no child is set yet, so its warm-up scan is `_scan_here`.
        _child = fork(partial(warm, scan_once=True), _scan_here)
    return _child is not None


def done_scanning() -> None:
    """The command has scanned what it came for (a standalone `similar`, its alert): the child leaves now,
    beside the lookup, rather than at the end (`stop_scanning_child`, which then only reaps it)."""
    if _child is not None:
        _child.release()


def stop_scanning_child() -> None:
    """Scan in this process again, letting the child go (`scan_in_child`): a command that ran in a process
    that goes on (a test's) leaves it as it found it."""
    global _child
    if _child is not None:
        _child.close()
        _child = None


def secret_spans(text: str) -> list[tuple[Span, str]]:
    """Every secret found in the whole of `text`, as (span, detector name), in text order."""
    return scan(text)


def redact(text: str, *, keyed: bool = False) -> str:
    """`text` with every secret found anywhere in it replaced by `[REDACTED]` (overlapping finds as one),
    then cut to `MAX_FIELD_CHARS`.

    `keyed`: replace each by `[REDACTED:<letters>]` instead, derived from a hash of what it replaced, for an
    identifier (a pager's random dedup key looks like a secret): equal keys stay equal, distinct ones
    distinct, and the key itself is gone.
    """
    return replace(text, merge(span for span, _ in secret_spans(text)), keyed=keyed)


def replace(text: str, spans: list[Span], *, keyed: bool = False) -> str:
    """`text` with these merged spans replaced by markers (see `redact`), then cut to `MAX_FIELD_CHARS`."""
    if not spans:
        return cap(text)
    out, last = [], 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(_keyed_marker(text[start:end]) if keyed else MARKER)
        last = end
    out.append(text[last:])
    return cap("".join(out))


_AS_LETTERS = str.maketrans("0123456789", "ghijklmnop")


def _keyed_marker(secret: str) -> str:
    # Letters only: noise stripping removes long hex and numbers, and must not make two markers equal.
    return f"[REDACTED:{hashlib.sha256(secret.encode()).hexdigest()[:12].translate(_AS_LETTERS)}]"
