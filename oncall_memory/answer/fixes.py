"""What the fixes of an incident say, read over time.

The same action can work once and stop working later ("restart coredns" resolved it in 2025, did nothing
after the upgrade in May). Each action is read as its history, and its latest outcome is what counts:
what a neighbour shows first, and what ranking rewards.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, NamedTuple

from ..domain.incident import worked

WORDS = {"resolved": "worked", "mitigated": "mitigated it", "no-op": "no effect", "worsened": "made it worse"}


class FixStory(NamedTuple):
    action: str  # as last written
    outcome: str  # the latest outcome
    at: str | None  # when (ISO 8601), if known
    before: tuple[tuple[str, str | None], ...]  # earlier (outcome, at), oldest first

    @property
    def worked(self) -> bool:
        return worked(self.outcome)

    @property
    def changed(self) -> bool:
        """Did this action once do otherwise (worked before, not any more, or the other way round)?"""
        return any(worked(outcome) != self.worked for outcome, _ in self.before)

    def told(self) -> str:
        """ "restart coredns: no effect since 2026-05-20; worked until 2026-05-02", most recent first."""
        now = f"{WORDS[self.outcome]} since {_day(self.at)}" if self.at else WORDS[self.outcome]
        last_other = next(((o, at) for o, at in reversed(self.before) if worked(o) != self.worked), None)
        if last_other is None:
            return f"{self.action}: {now}"
        outcome, at = last_other
        return (
            f"{self.action}: {now}; {WORDS[outcome]} until {_day(at)}"
            if at
            else f"{self.action}: {now}; {WORDS[outcome]} before"
        )


def stories(fixes: Iterable[dict[str, Any]]) -> list[FixStory]:
    """Each action's history (actions compared ignoring case and spacing), most recent first. A fix with
    no time counts as when it was listed, after any dated one before it."""
    fixes = list(fixes)
    if len(fixes) == 1:  # most incidents: one fix, its own whole story (ranking reads 50 per lookup)
        fix = fixes[0]
        return [FixStory(fix["action"], fix["outcome"], fix.get("at"), ())]
    keys = [_action_key(fix) for fix in fixes]
    if len(set(keys)) == len(keys):  # each action tried once: each fix its own story, newest first
        once = [FixStory(fix["action"], fix["outcome"], fix.get("at"), ()) for fix in fixes]
        return sorted(once, key=_newest, reverse=True)
    return stories_by_action(fixes, keys)


def stories_by_action(fixes: list[dict[str, Any]], keys: list[str] | None = None) -> list[FixStory]:
    """`stories` read the long way, every fix grouped by its action (`keys`: each fix's action as compared):
    what it does when an action was tried more than once."""
    history: dict[str, list[tuple[int, dict]]] = {}
    for position, (key, fix) in enumerate(zip(keys or [_action_key(f) for f in fixes], fixes)):
        history.setdefault(key, []).append((position, fix))
    out = []
    for entries in history.values():
        entries.sort(key=lambda e: (e[1].get("at") or "", e[0]) if e[1].get("at") else ("\uffff", e[0]))
        *earlier, (_, last) = entries
        out.append(
            FixStory(
                last["action"], last["outcome"], last.get("at"), tuple((f["outcome"], f.get("at")) for _, f in earlier)
            )
        )
    return sorted(out, key=_newest, reverse=True)


def _action_key(fix: dict[str, Any]) -> str:
    return " ".join(fix["action"].lower().split())


def _newest(story: FixStory) -> str:
    return story.at or ""


def _day(stamp: str | None) -> str:
    return datetime.fromisoformat(stamp).date().isoformat() if stamp else "?"
