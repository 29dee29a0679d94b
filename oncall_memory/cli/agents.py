"""For the humans' verdicts and the agents' questions: `feedback`, `mcp`."""

from __future__ import annotations

import argparse

from ..settings import Settings
from .lookup import alert_from_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("feedback", help="say whether a suggested incident helped with an alert (moves it next time)")
    p.add_argument("suggested", help="the suggested incident's id, e.g. INC-1042")
    p.add_argument("verdict", choices=["helped", "not-related"])
    p.add_argument("text", nargs="?", help="the alert the suggestion was made for")
    p.add_argument("--alert", metavar="FILE", help="the alert as a JSON file (text, signature, facts)")
    p.add_argument("--who", default="cli", help="who says so (default: cli)")
    p.set_defaults(func=cmd_feedback)

    p = sub.add_parser("mcp", help="serve the memory to AI agents over MCP on stdio")
    p.set_defaults(func=cmd_mcp)


def cmd_feedback(args: argparse.Namespace, settings: Settings) -> int:
    alert = alert_from_args(args)
    verdict = "not related" if args.verdict == "not-related" else "helped"
    from ..memory import Memory

    with Memory.open(settings) as memory:
        recorded = memory.record_feedback(alert, args.suggested, verdict, who=args.who, ref="cli")
    print(f"{args.suggested} {verdict} for alerts like {alert.text!r}" + ("" if recorded else " (already recorded)"))
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    from ..mcp_server import build_server
    from ..memory import Memory

    with Memory.open(settings) as memory:
        build_server(memory).run(transport="stdio")
    return 0
