"""For the humans' verdicts and the agents' questions: `feedback`, `mcp`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import InvalidInput, OncallMemoryError, ServiceUnreachable
from . import remote
from .common import err
from .similar import alert_from_args

if TYPE_CHECKING:
    from ..domain.alert import Alert
    from ..settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("feedback", help="say whether a suggested incident helped with an alert (moves it next time)")
    p.add_argument("suggested", help="the suggested incident's id, e.g. INC-1042")
    p.add_argument("verdict", choices=["helped", "not-related", "not related"], help="what the suggestion was")
    p.add_argument("text", nargs="?", help="the alert the suggestion was made for")
    p.add_argument("--alert", metavar="FILE", help="the alert as a JSON file (text, signature, facts)")
    p.add_argument("--who", default="cli", help="who says so (default: cli)")
    p.set_defaults(func=cmd_feedback)

    p = sub.add_parser(
        "mcp", help="serve the memory to AI agents over MCP on stdio (relayed to a running service's /mcp)"
    )
    p.set_defaults(func=cmd_mcp)


def cmd_feedback(args: argparse.Namespace, settings: Settings) -> int:
    alert = alert_from_args(args)
    verdict = "helped" if args.verdict == "helped" else "not related"
    recorded = _feedback_remote(args, settings, alert, verdict)
    if recorded is None:
        from ..memory import Memory

        with Memory.open(settings) as memory:
            recorded = memory.record_feedback(alert, args.suggested, verdict, who=args.who, ref="cli")
    print(f"{args.suggested} {verdict} for alerts like {alert.text!r}" + ("" if recorded else " (already recorded)"))
    return 0


def _feedback_remote(args: argparse.Namespace, settings: Settings, alert: Alert, verdict: str) -> bool | None:
    """Tell a running service (it owns the store); None when there is none or it does not answer."""
    url = remote.service_url(settings)
    if not url:
        return None
    body = {
        "alert": alert.model_dump(mode="json", exclude_defaults=True),
        "suggested": args.suggested,
        "verdict": verdict,
        "who": args.who,
    }
    try:
        response = remote.post(url, "/feedback", body)
    except ServiceUnreachable as exc:
        err(f"the service at {url} did not answer ({exc}); recording here instead")
        return None
    if response.status_code >= 400:
        error = InvalidInput if response.status_code < 500 else OncallMemoryError
        raise error(f"the service at {url}: {remote.detail(response)}")
    return bool(response.json()["recorded"])


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    url = remote.service_url(settings)
    if url:
        try:
            remote.get(url, "/healthz")
        except ServiceUnreachable as exc:
            err(f"the service at {url} did not answer ({exc}); serving the memory here instead")
        else:
            from ..mcp import proxy as mcp_proxy

            err(f"relaying MCP to the service at {url}/mcp (it holds the memory)")
            mcp_proxy.run(url.url, url.token)
            return 0
    from ..integrations.offers import live_incidents
    from ..mcp.server import build_server
    from ..memory import Memory

    live = live_incidents(settings)
    try:
        with Memory.open(settings) as memory:
            build_server(memory, live=live).run(transport="stdio")
    finally:
        if live is not None:
            live.close()
    return 0
