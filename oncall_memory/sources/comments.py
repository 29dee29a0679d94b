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

_OUTCOME_WORD = re.compile(r"[\w-]+")
_ROOT = re.compile(r"^root cause:\s*(?P<text>.+)$", re.I)
_OUTCOMES = {o.value for o in Outcome}
AFTER_RESOLUTION = dt.timedelta(minutes=10)


def fix_line(line: str) -> tuple[str, str] | None:
    """`Fix: <action> => <outcome>`, a responder's record of what was tried (in a comment or a PagerDuty
    note): its action and outcome word, or None. The last arrow divides them. Read with string operations:
    as one pattern (a lazy action between runs of spaces) a note's line of spaces took time quadratic in it."""
    if line[:4].lower() != "fix:":
        return None
    action, arrow, outcome = line[4:].rpartition("=>")
    action, outcome = action.strip(), outcome.strip()
    return (action, outcome) if arrow and action and _OUTCOME_WORD.fullmatch(outcome) else None


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
            if (fix := fix_line(line)) and fix[1].lower() in _OUTCOMES:
                story.fixes.append({"action": fix[0], "outcome": fix[1].lower()})
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
