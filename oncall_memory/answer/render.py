"""One lookup, its readers: the terminal and a plain-text note (a pager's incident note, a chat message's
notification text). A chat's own rich message is its integration's (`integrations/<name>/render.py`), built
from the parts here.

Each renderer picks reasons by kind (see `ranking`): a fix is shown once, on its own line, never
again in "why". What goes out is kept inside the target's limits; a long message is cut and marked
with "…", never dropped; and it carries no bidi override or invisible character (`redact.neutralise`),
so a name reads as what it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..redact import neutralise
from .ranking import AGE, CHANGED, FIX_KINDS, FIXED, NO_EFFECT, WORSE, Neighbour
from .retrieve import Lookup

NOTE_LIMIT = 25_000  # characters of a plain-text note (the most a pager takes in one)
ELLIPSIS = "…"

# Blocks to follow one neighbour's section in a chat message (a chat app's feedback buttons).
Extra = Callable[[Lookup, Neighbour], list[dict[str, Any]]]


@dataclass(frozen=True)
class Answer:
    """One alert (or several alerts that read the same after cleaning) and what the memory found for it."""

    title: str
    count: int
    lookup: Lookup
    detail: str | None = None  # the alert's description, under its heading
    runbook: str | None = None
    rule: str | None = None  # the alert rule's name, where the pager gives it (its family in the coverage report)


def clip(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with a trailing "…" when it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


# Said when the best match is weak: what a responder must not take for an answer.
NOTHING_CLOSE = "nothing close is on record: the nearest past incidents below are weak matches, not fixes to apply"
# A weak match's fix is what fixed *that* incident, not a suggestion for this one.
WEAK_FIX = "fixed that one (weak match, not a suggestion)"


def confidence_words(n: Neighbour) -> str:
    return f"{n.confidence} confidence" + (" (weak match)" if n.confidence == "low" else "")


def fix_lines(n: Neighbour) -> list[tuple[str, str]]:
    """(label, actions) for each kind of fix outcome this neighbour has, in a fixed order. A low-confidence
    neighbour's fix is labelled as that incident's, never as "fixed by"."""
    fixed = WEAK_FIX if n.confidence == "low" else "fixed by"
    labels = {
        FIXED: fixed,
        NO_EFFECT: "tried without effect",
        WORSE: "made it worse",
        CHANGED: "changed over time",
    }
    if not n.boosts:  # a neighbour read back from JSON (a service's answer) has its lists, not its boosts
        return [
            (label, "; ".join(actions))
            for label, actions in ((fixed, n.fixes_worked), ("tried without effect", n.fixes_failed))
            if actions
        ]
    return [
        (labels[b.kind], b.text if b.kind == CHANGED else "; ".join(b.detail)) for b in n.boosts if b.kind in labels
    ]


def why(n: Neighbour) -> str:
    return "; ".join(n.reasons_except(AGE, *FIX_KINDS))


# -- the terminal -----------------------------------------------------------------------------------


def terminal(lookup: Lookup, text: str, elapsed: float, *, colour: bool = False, width: int | None = None) -> str:
    """What `oncall-memory similar` prints: plain when piped; on a terminal (`colour`, `width`) with colour
    and lines wrapped under their label. Control characters from the incidents and the alert (an escape
    sequence in a title could retitle or clear a responder's terminal) are shown as "�", never sent."""
    plain = _CONTROL.sub("\N{REPLACEMENT CHARACTER}", _terminal(lookup, text, elapsed).replace("\t", " "))
    if not colour and not width:
        return plain
    return "\n".join(_styled(line, colour, width) for line in plain.split("\n"))


_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_ANSI = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
_STYLES = [  # a line's start -> how it is shown
    (re.compile(r"Past incidents like "), ("bold",)),
    (re.compile(r"  ! "), ("yellow",)),
    (re.compile(r"\d+\. "), ("bold",)),
    (re.compile(r"   high confidence"), ("green",)),
    (re.compile(r"   low confidence"), ("yellow",)),
    (re.compile(r"   fixed by: "), ("green",)),
    (re.compile(r"   fixed that one "), ("yellow",)),
    (re.compile(r"   (tried without effect|made it worse): "), ("red",)),
    (re.compile(r"   why: "), ("dim",)),
    (re.compile(r"   https?://"), ("cyan",)),
]


def _styled(line: str, colour: bool, width: int | None) -> str:
    import textwrap

    if width and len(line) > width:
        indent = "      " if line.startswith("   ") else "   "
        line = "\n".join(textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False)) or line
    if not colour:
        return line
    for start, styles in _STYLES:
        if start.match(line):
            codes = ";".join(_ANSI[x] for x in styles)
            return "\n".join(f"\x1b[{codes}m{part}\x1b[0m" for part in line.split("\n"))
    return line


def _terminal(lookup: Lookup, text: str, elapsed: float) -> str:
    how = f"{lookup.mode} search" + (", ranked by facts" if lookup.ranked else "")
    lines = [f'Past incidents like "{text}"  ({how}, {elapsed * 1000:.0f} ms)']
    if lookup.degraded:
        lines.append(f"  ! {lookup.degraded}")
    if not lookup.neighbours:
        lines.append("  nothing similar on record.")
    elif lookup.confidence == "low":
        lines.append(f"  ! {NOTHING_CLOSE}")
    for i, n in enumerate(lookup.neighbours, start=1):
        sim = f"  similarity {n.similarity:.2f}" if n.similarity is not None else ""
        lines.append(f"\n{i}. {n.id}  {n.title}")
        if n.root_cause:  # what the page shows under each title: a responder in a terminal needs it too
            lines.append(f"   cause: {clip(' '.join(n.root_cause.split()), 300)}")
        lines.append(f"   {confidence_words(n)} · score {n.score:.3f}{sim}")
        where = " · ".join(x for x in (n.age, n.env, n.flavor, n.service) if x)
        if where:
            lines.append(f"   {where}")
        lines += [f"   {label}: {actions}" for label, actions in fix_lines(n)]
        lines.append(f"   why: {why(n)}")  # fixes and age: on their own lines
        if n.url:
            lines.append(f"   {n.url}")
    return "\n".join(lines)


# -- a note (plain text) -------------------------------------------------------------------------


def note_text(
    title: str,
    lookup: Lookup,
    *,
    limit: int = NOTE_LIMIT,
    detail: str | None = None,
    runbook: str | None = None,
) -> str:
    """Plain text for a note: the top neighbours with link, age, what worked, what did not."""
    about = [clip(detail, 500)] if detail else []
    about += [f"runbook: {runbook}"] if runbook else []
    if not lookup.neighbours:
        return clip("\n".join([f'oncall-memory: nothing similar to "{title}" on record.', *about]), limit)
    if lookup.confidence == "low":
        lines = [f'oncall-memory: for "{title}" {NOTHING_CLOSE}']
    else:
        lines = [f'oncall-memory: {len(lookup.neighbours)} similar past incident(s) for "{title}"']
    lines += about
    lines += _note_lines(lookup)
    return clip("\n".join(lines), limit)


def _note_lines(lookup: Lookup) -> list[str]:
    lines = [f"(note: {lookup.degraded})"] if lookup.degraded else []
    for i, n in enumerate(lookup.neighbours, start=1):
        lines.append("")
        lines.append(f"{i}. {n.id} {n.title} [{confidence_words(n)}]" + (f" ({n.age})" if n.age else ""))
        lines += [f"   {label}: {actions}" for label, actions in fix_lines(n)]
        lines.append(f"   why: {why(n)}")
        if n.url:
            lines.append(f"   {n.url}")
    return lines


def job_note(title: str, answers: list[Answer], *, limit: int = NOTE_LIMIT) -> str:
    """A note for one alert (as `note_text`) or for a group: each distinct alert and its neighbours."""
    return neutralise(_job_note(title, answers, limit=limit))


def _job_note(title: str, answers: list[Answer], *, limit: int) -> str:
    if len(answers) == 1 and answers[0].count == 1:
        a = answers[0]
        return note_text(title, a.lookup, limit=limit, detail=a.detail, runbook=a.runbook)
    lines = [f'oncall-memory: {sum(a.count for a in answers)} firing alerts in "{title}"']
    for a in answers:
        lines += ["", f"== {a.title}" + (f" (x{a.count})" if a.count > 1 else "")]
        lines += [clip(a.detail, 500)] if a.detail else []
        lines += [f"runbook: {a.runbook}"] if a.runbook else []
        if a.lookup.neighbours and a.lookup.confidence == "low":
            lines.append(NOTHING_CLOSE + ".")
        lines += _note_lines(a.lookup) if a.lookup.neighbours else ["nothing similar on record."]
    return clip("\n".join(lines), limit)
