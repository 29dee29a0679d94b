"""Dates as people type them on a command line: `2026-11-01`, `2026-11-01T03:00Z`, `yesterday`, `today`,
`7d`, `36h`, `2w`, `90m` (ago). Each is a moment in UTC; a bare date is its start."""

from __future__ import annotations

import argparse
import re
from datetime import datetime, time, timedelta, timezone

_AGO = re.compile(r"(\d{1,6})\s*(m|min|h|d|w)")
_UNITS = {"m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}
FORMS = "a date (2026-11-01), a date and time (2026-11-01T03:00Z), today, yesterday, or an age (7d, 36h, 2w)"


def past(value: datetime | None, flag: str) -> None:
    """Refuse a moment in the future where only the past can match (`--since tomorrow` found nothing, and
    said "nothing similar on record")."""
    from ..errors import InvalidInput

    if value is not None and value > datetime.now(timezone.utc):
        raise InvalidInput(f"{flag} {value:%Y-%m-%d %H:%M}Z is in the future: nothing on record was opened then")


def moment(value: str, now: datetime | None = None) -> datetime:
    """The moment `value` names, or `argparse.ArgumentTypeError` saying which forms are read."""
    now = now or datetime.now(timezone.utc)
    text = value.strip().lower()
    midnight = datetime.combine(now.date(), time(), timezone.utc)
    if text == "today":
        return midnight
    if text == "yesterday":
        return midnight - timedelta(days=1)
    if ago := _AGO.fullmatch(text):
        return now - timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
    try:
        given = datetime.fromisoformat(value.strip().replace("z", "Z"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is not a date: give {FORMS}") from None
    return given.replace(tzinfo=timezone.utc) if given.tzinfo is None else given  # as facts.as_utc: no zone is UTC
