"""One lookup, three readers: the terminal, a PagerDuty note, a Slack message.

Each renderer picks reasons by kind (see `ranking`), so a fact shown on its own line is not repeated
in "why".
"""

from __future__ import annotations

from typing import Any

from .ranking import AGE, Neighbour
from .retrieve import Lookup


def terminal(lookup: Lookup, text: str, elapsed: float) -> str:
    """What `oncall-memory similar` prints."""
    how = f"{lookup.mode} search" + (", ranked by facts" if lookup.ranked else "")
    lines = [f'Past incidents like "{text}"  ({how}, {elapsed * 1000:.0f} ms)']
    if lookup.degraded:
        lines.append(f"  ! {lookup.degraded}")
    if not lookup.neighbours:
        lines.append("  nothing similar on record.")
    for i, n in enumerate(lookup.neighbours, start=1):
        sim = f"  similarity {n.similarity:.2f}" if n.similarity is not None else ""
        lines.append(f"\n{i}. {n.id}  {n.title}\n   score {n.score:.3f}{sim}")
        where = " · ".join(x for x in (n.age, n.env, n.flavor, n.service) if x)
        if where:
            lines.append(f"   {where}")
        if n.fixes_worked:
            lines.append(f"   fixed by: {'; '.join(n.fixes_worked)}")
        if n.fixes_failed:
            lines.append(f"   tried without effect: {'; '.join(n.fixes_failed)}")
        lines.append(f"   why: {'; '.join(n.reasons)}")
        if n.url:
            lines.append(f"   {n.url}")
    return "\n".join(lines)


def note_text(title: str, lookup: Lookup) -> str:
    """Plain text for a PagerDuty note: the top neighbours with link, age, what worked, what did not."""
    if not lookup.neighbours:
        return f"oncall-memory: nothing similar to \"{title}\" on record."
    lines = [f"oncall-memory: {len(lookup.neighbours)} similar past incident(s) for \"{title}\""]
    if lookup.degraded:
        lines.append(f"(note: {lookup.degraded})")
    for i, n in enumerate(lookup.neighbours, start=1):
        lines.append("")
        lines.append(f"{i}. {n.id} {n.title}" + (f" ({n.age})" if n.age else ""))
        if n.fixes_worked:
            lines.append(f"   fixed by: {'; '.join(n.fixes_worked)}")
        if n.fixes_failed:
            lines.append(f"   tried without effect: {'; '.join(n.fixes_failed)}")
        lines.append(f"   why: {'; '.join(n.reasons_except(AGE))}")
        if n.url:
            lines.append(f"   {n.url}")
    return "\n".join(lines)


def _slack_block(i: int, n: Neighbour) -> dict[str, Any]:
    head = f"*{i}. <{n.url}|{n.id}>* {n.title}" if n.url else f"*{i}. {n.id}* {n.title}"
    body = [head + (f"  _{n.age}_" if n.age else "")]
    if n.fixes_worked:
        body.append(f":white_check_mark: fixed by: {'; '.join(n.fixes_worked)}")
    if n.fixes_failed:
        body.append(f":x: tried without effect: {'; '.join(n.fixes_failed)}")
    body.append(f"why: {'; '.join(n.reasons_except(AGE))}")
    return {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(body)}}


def slack_message(title: str, lookup: Lookup) -> dict[str, Any]:
    """An incoming-webhook message: `text` for notifications, Block Kit blocks for the channel."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": f"Seen before? {title}"[:150]}}
    ]
    if lookup.degraded:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": lookup.degraded}]})
    blocks += [_slack_block(i, n) for i, n in enumerate(lookup.neighbours, start=1)] or [
        {"type": "section", "text": {"type": "mrkdwn", "text": "Nothing similar on record."}}
    ]
    return {"text": note_text(title, lookup), "blocks": blocks}
