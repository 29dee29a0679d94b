"""One lookup, three readers: the terminal, a PagerDuty note, a Slack message.

Each renderer picks reasons by kind (see `ranking`): a fix is shown once, on its own line, never
again in "why". What goes to a chat is escaped and kept inside the target's limits; a long message
is cut and marked with "…", never dropped; and it carries no bidi override or invisible character
(`redact.neutralise`), so a name reads as what it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..links import web_link
from ..redact import neutralise
from .ranking import AGE, CHANGED, FIX_KINDS, FIXED, NO_EFFECT, WORSE, Neighbour
from .retrieve import Lookup

PAGERDUTY_NOTE_LIMIT = 25_000  # characters PagerDuty takes in a note
SLACK_HEADER_LIMIT = 150  # Block Kit: header text
SLACK_SECTION_LIMIT = 3_000  # Block Kit: section text
SLACK_TEXT_LIMIT = 3_000  # the notification text; Slack itself cuts far later, a phone shows far less
SLACK_BLOCK_LIMIT = 50
ELLIPSIS = "…"

# Blocks to follow one neighbour's section in a Slack message (the Slack app's feedback buttons).
Extra = Callable[[Lookup, Neighbour], list[dict[str, Any]]]


@dataclass(frozen=True)
class Answer:
    """One alert (or several alerts that read the same after cleaning) and what the memory found for it."""

    title: str
    count: int
    lookup: Lookup
    detail: str | None = None  # the alert's description, under its heading
    runbook: str | None = None


def clip(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with a trailing "…" when it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


# Said when the best match is weak: what a responder must not take for an answer.
NOTHING_CLOSE = "nothing close is on record: the nearest past incidents below are weak matches, not fixes to apply"
# A weak match's fix is what fixed *that* incident, not a suggestion for this one.
WEAK_FIX = "fixed that one (weak match, not a suggestion)"


def confidence_words(n: Neighbour) -> str:
    return f"{n.confidence} confidence" + (" (weak match)" if n.confidence == "low" else "")


def _fix_lines(n: Neighbour) -> list[tuple[str, str]]:
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


def _why(n: Neighbour) -> str:
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
        lines += [f"   {label}: {actions}" for label, actions in _fix_lines(n)]
        lines.append(f"   why: {_why(n)}")  # fixes and age: on their own lines
        if n.url:
            lines.append(f"   {n.url}")
    return "\n".join(lines)


# -- a PagerDuty note (plain text) ------------------------------------------------------------------


def note_text(
    title: str,
    lookup: Lookup,
    *,
    limit: int = PAGERDUTY_NOTE_LIMIT,
    detail: str | None = None,
    runbook: str | None = None,
) -> str:
    """Plain text for a PagerDuty note: the top neighbours with link, age, what worked, what did not."""
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
        lines += [f"   {label}: {actions}" for label, actions in _fix_lines(n)]
        lines.append(f"   why: {_why(n)}")
        if n.url:
            lines.append(f"   {n.url}")
    return lines


def job_note(title: str, answers: list[Answer], *, limit: int = PAGERDUTY_NOTE_LIMIT) -> str:
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


# -- Slack (Block Kit, mrkdwn) ----------------------------------------------------------------------


def escape(text: str) -> str:
    """Slack's three control characters, so no input becomes a mention, a link or a channel ping."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _link(url: str | None, label: str) -> str:
    if safe := web_link(url):
        return f"<{escape(safe)}|{escape(label)}>"
    return escape(label)  # a URL Slack could misread is left out of the link


def _clip_escaped(text: str, limit: int) -> str:
    """Cut escaped mrkdwn without splitting an entity such as `&amp;`."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    amp = cut.rfind("&", max(0, len(cut) - 5))
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    return cut + ELLIPSIS


def _slack_section(i: int, n: Neighbour) -> dict[str, Any]:
    head = f"*{i}. {_link(n.url, n.id)}* {escape(clip(n.title, 300))}" + (f"  _{escape(n.age)}_" if n.age else "")
    body = [head, f"_{confidence_words(n)}_"]
    marks = {
        "fixed by": ":white_check_mark:",
        WEAK_FIX: ":grey_question:",
        "tried without effect": ":x:",
        "made it worse": ":warning:",
        "changed over time": ":hourglass:",
    }
    body += [f"{marks[label]} {label}: {escape(clip(actions, 800))}" for label, actions in _fix_lines(n)]
    body.append(f"why: {escape(clip(_why(n), 800))}")
    text = _clip_escaped("\n".join(body), SLACK_SECTION_LIMIT)
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _neighbour_blocks(lookup: Lookup, extra: Extra | None) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for i, n in enumerate(lookup.neighbours, start=1):
        blocks.append(_slack_section(i, n))
        blocks += extra(lookup, n) if extra else []
    return blocks


def job_slack(title: str, answers: list[Answer], *, extra: Extra | None = None) -> dict[str, Any]:
    """A Slack message for one alert (as `slack_message`) or for a group: each distinct alert in a context
    block followed by its neighbours, within Block Kit's 50 blocks; what does not fit is counted at the end."""
    return _neutral(_job_slack(title, answers, extra))


def _neutral(value: Any) -> Any:
    if isinstance(value, str):
        return neutralise(value)
    if isinstance(value, list):
        return [_neutral(v) for v in value]
    if isinstance(value, dict):
        return {k: _neutral(v) for k, v in value.items()}
    return value


def _job_slack(title: str, answers: list[Answer], extra: Extra | None) -> dict[str, Any]:
    if len(answers) == 1 and answers[0].count == 1:
        a = answers[0]
        return slack_message(title, a.lookup, detail=a.detail, runbook=a.runbook, extra=extra)
    total = sum(a.count for a in answers)
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": clip(f"Seen before? {title}", SLACK_HEADER_LIMIT)}}
    ]
    shown = 0
    for a in answers:
        sections = _neighbour_blocks(a.lookup, extra) or [
            {"type": "section", "text": {"type": "mrkdwn", "text": "Nothing similar on record."}}
        ]
        if len(blocks) + 1 + len(sections) > SLACK_BLOCK_LIMIT - 1:  # keep one block for the overflow line
            break
        head = f"*{escape(clip(a.title, 300))}*" + (f" ×{a.count}" if a.count > 1 else "")
        if a.detail:
            head += f"\n{escape(clip(a.detail, 500))}"
        if a.runbook:
            head += f"  {_link(a.runbook, 'runbook')}"
        if a.lookup.neighbours and a.lookup.confidence == "low":
            head += f"  _{NOTHING_CLOSE}_"
        if a.lookup.degraded:
            head += f"  _{escape(clip(a.lookup.degraded, 500))}_"
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": head}]})
        blocks += sections
        shown += 1
    if shown < len(answers):
        rest = answers[shown:]
        blocks.append(
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": (
                            f"… and {len(rest)} more distinct alert(s), {sum(a.count for a in rest)} firing, not shown"
                        ),
                    }
                ],
            }
        )
    text = _clip_escaped(escape(job_note(title, answers)), SLACK_TEXT_LIMIT)
    return {"text": text if total else "", "blocks": blocks}


def slack_message(
    title: str, lookup: Lookup, *, detail: str | None = None, runbook: str | None = None, extra: Extra | None = None
) -> dict[str, Any]:
    """A Slack message: `text` for notifications, Block Kit blocks for the channel (`extra`: blocks after
    each neighbour)."""
    blocks: list[dict[str, Any]] = [
        # plain_text is never parsed for mentions or links: no escaping, only the length limit.
        {"type": "header", "text": {"type": "plain_text", "text": clip(f"Seen before? {title}", SLACK_HEADER_LIMIT)}}
    ]
    if detail or runbook:
        about = escape(clip(detail, 1000)) if detail else ""
        about += f"  {_link(runbook, 'runbook')}" if runbook else ""
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": about.strip()}]})
    if lookup.degraded:
        blocks.append(
            {"type": "context", "elements": [{"type": "mrkdwn", "text": escape(clip(lookup.degraded, 2000))}]}
        )
    if lookup.neighbours and lookup.confidence == "low":
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": f":grey_question: *{NOTHING_CLOSE}*"}})
    sections = _neighbour_blocks(lookup, extra)
    blocks += sections or [{"type": "section", "text": {"type": "mrkdwn", "text": "Nothing similar on record."}}]
    text = _clip_escaped(escape(note_text(title, lookup, detail=detail, runbook=runbook)), SLACK_TEXT_LIMIT)
    return {"text": text, "blocks": blocks[:SLACK_BLOCK_LIMIT]}
