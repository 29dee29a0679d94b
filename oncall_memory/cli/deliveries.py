"""`oncall-memory deliveries`: what the service posted, is still trying to post, or gave up on."""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..errors import InvalidInput

if TYPE_CHECKING:
    from ..settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("deliveries", help="the service's notes and messages: state, attempts, last error")
    p.add_argument("--failed", action="store_true", help="only those given up (refused, or past their deadline)")
    p.add_argument("--json", action="store_true", help="print the deliveries as a JSON list")
    p.set_defaults(func=cmd_deliveries)


def _when(stamp: float | None) -> str:
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ") if stamp else "-"


def cmd_deliveries(args: argparse.Namespace, settings: Settings) -> int:
    from ..jobs import short_key
    from ..service.outbox import Outbox

    path = settings.dir.file("outbox.sqlite3")
    if path is None or not path.exists():
        raise InvalidInput(f"no outbox at {path}: the service (oncall-memory serve) has not received a webhook here")
    with Outbox(path) as outbox:
        rows = outbox.deliveries(failed_only=args.failed)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no deliveries" + (" failed" if args.failed else ""))
    for r in rows:
        line = (
            f"{r['state']:<8} {r['target']:<15} {short_key(r['job'])}  attempts {r['attempts']}  "
            f"updated {_when(r['updated_at'])}"
        )
        if r["state"] in ("pending", "new"):
            line += f"  next {_when(r['next_at'])}  deadline {_when(r['deadline'])}"
        print(line)
        if r["last_error"]:
            print(f"         last error: {r['last_error']}")
    return 0
