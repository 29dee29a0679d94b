"""Slack's message for a lookup: Block Kit blocks for the channel, and the plain-text note as the
notification's text. Everything from an incident or an alert is escaped for mrkdwn (no input becomes a
mention, a link or a channel ping), cut inside Block Kit's limits, and neutralised (`redact.neutralise`).
"""

from __future__ import annotations

from typing import Any

from ...answer.ranking import Neighbour
from ...answer.render import (
    ELLIPSIS,
    NOTHING_CLOSE,
    WEAK_FIX,
    Answer,
    Extra,
    clip,
    confidence_words,
    fix_lines,
    job_note,
    note_text,
    why,
)
from ...answer.retrieve import Lookup
from ...links import web_link
from ...redact import neutralise

HEADER_LIMIT = 150  # Block Kit: header text
SECTION_LIMIT = 3_000  # Block Kit: section text
TEXT_LIMIT = 3_000  # the notification text; Slack itself cuts far later, a phone shows far less
BLOCK_LIMIT = 50


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
    body += [f"{marks[label]} {label}: {escape(clip(actions, 800))}" for label, actions in fix_lines(n)]
    body.append(f"why: {escape(clip(why(n), 800))}")
    text = _clip_escaped("\n".join(body), SECTION_LIMIT)
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
        {"type": "header", "text": {"type": "plain_text", "text": clip(f"Seen before? {title}", HEADER_LIMIT)}}
    ]
    shown = 0
    for a in answers:
        sections = _neighbour_blocks(a.lookup, extra) or [
            {"type": "section", "text": {"type": "mrkdwn", "text": "Nothing similar on record."}}
        ]
        if len(blocks) + 1 + len(sections) > BLOCK_LIMIT - 1:  # keep one block for the overflow line
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
    text = _clip_escaped(escape(job_note(title, answers)), TEXT_LIMIT)
    return {"text": text if total else "", "blocks": blocks}


def slack_message(
    title: str, lookup: Lookup, *, detail: str | None = None, runbook: str | None = None, extra: Extra | None = None
) -> dict[str, Any]:
    """A Slack message: `text` for notifications, Block Kit blocks for the channel (`extra`: blocks after
    each neighbour)."""
    blocks: list[dict[str, Any]] = [
        # plain_text is never parsed for mentions or links: no escaping, only the length limit.
        {"type": "header", "text": {"type": "plain_text", "text": clip(f"Seen before? {title}", HEADER_LIMIT)}}
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
    text = _clip_escaped(escape(note_text(title, lookup, detail=detail, runbook=runbook)), TEXT_LIMIT)
    return {"text": text, "blocks": blocks[:BLOCK_LIMIT]}
