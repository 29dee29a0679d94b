"""What a tracker's comments say about an incident: root cause lines, fix lines, the resolving comment.

Jira and GitHub keep an incident's story in comments. The conventions PagerDuty notes use are read here
too ("Root cause: ...", "Fix: <action> => <resolved|mitigated|no-op|worsened>"), and the comment made by
the time the incident was resolved (a few minutes after: trackers stamp the transition first) is taken
as the fix that resolved it, unless a "Fix:" line already says what did.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from ..domain.incident import Outcome
from .sections import MAX_FIXES, clip_field

_FIX = re.compile(r"^fix:\s*(?P<action>.+?)\s*=>\s*(?P<outcome>[\w-]+)\s*$", re.I)
_ROOT = re.compile(r"^root cause:\s*(?P<text>.+)$", re.I)
_OUTCOMES = {o.value for o in Outcome}
AFTER_RESOLUTION = dt.timedelta(minutes=10)


@dataclass(frozen=True)
class Comment:
    at: dt.datetime | None
    text: str


@dataclass
class Story:
    root_causes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fixes: list[dict[str, str]] = field(default_factory=list)


def read_comments(comments: list[Comment], resolved_at: dt.datetime | None) -> Story:
    """The story in `comments`, oldest first (see the module doc)."""
    story = Story()
    ordered = sorted(comments, key=lambda c: c.at or dt.datetime.min.replace(tzinfo=dt.timezone.utc))
    resolving = _resolving(ordered, resolved_at)
    resolution = None
    for comment in ordered:
        rest = []
        for line in comment.text.splitlines():
            line = line.strip().lstrip("-*> ").strip()
            if (fix := _FIX.match(line)) and fix["outcome"].lower() in _OUTCOMES:
                story.fixes.append({"action": fix["action"], "outcome": fix["outcome"].lower()})
            elif root := _ROOT.match(line):
                story.root_causes.append(root["text"])
            elif line:
                rest.append(line)
        if comment is resolving:
            resolution = clip_field(" ".join(rest), "fix")
        if rest:
            story.notes.append(" ".join(rest))
    if resolution and not any(Outcome(f["outcome"]).worked for f in story.fixes):
        story.fixes.append({"action": resolution, "outcome": Outcome.resolved.value})
    return story


def add_story(fields: dict, story: Story) -> dict:
    """`fields` with what the comments said added: root causes, notes (after the description's), fixes."""
    if story.root_causes:
        fields["root_cause"] = clip_field(
            " ".join(filter(None, [fields.get("root_cause"), *story.root_causes])), "root_cause"
        )
    fields["oncall_note"] = clip_field(" ".join(filter(None, [fields.get("oncall_note"), *story.notes])), "oncall_note")
    fields["fixes_attempted"] = [*(fields.get("fixes_attempted") or []), *story.fixes][:MAX_FIXES]
    return fields


def _resolving(ordered: list[Comment], resolved_at: dt.datetime | None) -> Comment | None:
    if not ordered:
        return None
    if resolved_at is not None:
        before = [c for c in ordered if c.at is not None and c.at <= resolved_at + AFTER_RESOLUTION]
        return before[-1] if before else None
    return ordered[-1]
