"""`oncall-memory answers` and `oncall-memory coverage` (issue 84): what the service answered each alert it
saw, and the alert families whose answers read "nothing close is on record" (the runbooks to write next).

Asked of a running service when there is one (`/answers`, `/coverage`), else read from the answer log it
kept in the data dir.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, OncallMemoryError, ServiceUnreachable
from . import remote
from .when import moment

if TYPE_CHECKING:
    from ..settings import Settings

DAY = 86400.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("answers", help="what the service answered each alert it saw, newest first")
    p.add_argument("--since", type=moment, help="only alerts since (2026-11-01, yesterday, 7d; default: all kept)")
    p.add_argument("--limit", type=int, default=50, help="at most this many (1..1000, default 50)")
    p.add_argument("--json", action="store_true", help="print them as a JSON list")
    p.set_defaults(func=cmd_answers)

    p = sub.add_parser("coverage", help="the alert families with nothing close on record: the runbooks to write")
    p.add_argument("--since", type=moment, help="families seen since (default 30d)")
    p.add_argument("--written", metavar="FAMILY", help="say a runbook or an incident for FAMILY was written")
    p.add_argument("--json", action="store_true", help="print them as a JSON list")
    p.set_defaults(func=cmd_coverage)


def _days(since: datetime | None, default: float | None) -> float | None:
    if since is None:
        return default
    days = (time.time() - since.timestamp()) / DAY
    if days <= 0:
        raise InvalidInput(f"--since {since:%Y-%m-%d %H:%M}Z is in the future: give a moment before now")
    return days


def _when(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d %H:%MZ")


def _asked(settings: Settings, path: str, body: dict[str, Any] | None = None) -> Any | None:
    """The running service's answer to `path`, or None when no service runs here."""
    service = remote.service_url(settings)
    if service is None:
        return None
    try:
        answer = remote.post(service, path, body) if body is not None else remote.get(service, path)
    except ServiceUnreachable:
        return None
    if answer.status_code >= 400:
        error = InvalidInput if answer.status_code < 500 else OncallMemoryError
        raise error(f"the service at {service}: {remote.detail(answer)}")
    return answer.json()


def _book(settings: Settings) -> Any:
    from ..service.answer_log import read_only

    path = settings.dir.file("answers.sqlite3")
    book = read_only(path) if path is not None else None
    if book is None:
        raise InvalidInput(f"no answer log at {path}: the service (oncall-memory serve) has not answered an alert here")
    return book


def cmd_answers(args: argparse.Namespace, settings: Settings) -> int:
    from urllib.parse import urlencode

    if not 1 <= args.limit <= 1000:
        raise InvalidInput(f"--limit {args.limit}: give 1 to 1000")
    days = _days(args.since, None)
    query = urlencode({"limit": args.limit, **({"days": f"{days:.6f}"} if days else {})})
    rows = _asked(settings, f"/answers?{query}")
    if rows is None:
        from ..service.answer_log import rows as as_rows

        book = _book(settings)
        try:
            rows = as_rows(book.recent(None if days is None else time.time() - days * DAY, args.limit))
        finally:
            book.close()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no alert answered" + (" since then" if days else " yet"))
    for a in rows:
        where = ", ".join(f"{t} ({s})" for t, s in (a.get("deliveries") or {}).items()) or ", ".join(a["posted_to"])
        print(
            f"{_when(a['at'])}  {a['pager']:<12} {a['headline'][:90]}"
            + (f"  (x{a['count']})" if a["count"] > 1 else "")
        )
        if not a["first"]:
            print("    nothing on record")
        elif a["confidence"] == "low":
            print("    nothing close is on record; nearest: " + ", ".join(n["id"] for n in a["first"]))
        for n in a["first"] if a["confidence"] != "low" else []:
            print(f"    {n['confidence']:<6} {n['id']}  {n['title'][:80]}")
        print(f"    posted to: {where or 'nowhere (kept here only)'}")
    return 0


def cmd_coverage(args: argparse.Namespace, settings: Settings) -> int:
    if args.written:
        if _asked(settings, "/coverage/written", {"family": args.written}) is None:
            book = _book(settings)
            try:
                if not book.mark_written(args.written):
                    raise InvalidInput(
                        f"no alert family {args.written[:80]!r} was seen: `oncall-memory coverage` lists them"
                    )
            finally:
                book.close()
        print(f"{args.written}: marked written; it leaves the list when its answers stop reading low")
        return 0
    days = _days(args.since, 30.0)
    rows = _asked(settings, f"/coverage?days={days:.6f}")
    if rows is None:
        from ..service.answer_log import family_rows

        book = _book(settings)
        try:
            rows = family_rows(book.uncovered(time.time() - (days or 30.0) * DAY))
        finally:
            book.close()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f"every alert family seen in the last {days:.0f} days has something close on record")
        return 0
    print(f"{len(rows)} alert families with nothing close on record (last {days:.0f} days): the runbooks to write")
    for f in rows:
        mark = f"  written {_when(f['written'])}, waiting for it to fire again" if f["written"] else ""
        print(f"  {f['family'][:60]:<60} {f['low']:>4} low of {f['seen']:>4} seen, last {_when(f['last_seen'])}{mark}")
    return 0
