"""Long-running commands: `serve` (the enrichment service) and `schedule` (the Prefect ingest).

Their stacks (uvicorn and FastAPI, Prefect) load only when one of them runs.
"""

from __future__ import annotations

import argparse
import errno
import logging
import socket
from typing import TYPE_CHECKING

from ..errors import InvalidInput, OncallMemoryError
from .common import EXIT_FAILED

if TYPE_CHECKING:
    from ..settings import Settings


class ServeFailed(OncallMemoryError):
    """The service cannot listen where it was asked to: exit 1, one line."""


def register(sub: argparse._SubParsersAction) -> None:
    # The schedule parses its own options (`schedule.main`, also behind `python flows/ingest.py`).
    p = sub.add_parser(
        "schedule", add_help=False, help="run the ingest flow on a schedule (starts a local Prefect server if needed)"
    )
    p.set_defaults(func=cmd_schedule)

    p = sub.add_parser("serve", help="the webhook enrichment service (each pager's webhook, /similar, the page, MCP)")
    p.add_argument("--host", help="default ONCALL_MEMORY_HOST or 127.0.0.1")
    p.add_argument("--port", type=int, help="default ONCALL_MEMORY_PORT or 8080")
    p.set_defaults(func=cmd_serve)


def cmd_schedule(args: argparse.Namespace, settings: Settings) -> int:
    from ..orchestration import schedule

    return schedule.main(args.options, settings)


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from ..log_format import uvicorn_config
    from ..memory import Memory
    from ..service import create_app
    from ..service.auth import exposure, proxy_trust_problem
    from ..service.outbox import Outbox

    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = settings.replace(**overrides)
    if problems := exposure(settings):
        raise InvalidInput(
            f"refusing to serve on {settings.service.host} with routes anyone who reaches the port can call: "
            + "; ".join(problems)
            + ". Set those, serve on 127.0.0.1 behind your own proxy, or set ONCALL_MEMORY_ALLOW_UNAUTHENTICATED=true"
        )
    if problem := proxy_trust_problem(settings):
        raise InvalidInput(f"refusing to serve: {problem}")
    # The port first: taken, it is one line and exit 1 before anything is loaded or logged.
    sock = listening_socket(settings.service.host, settings.service.port)
    # The service's own lines (what it holds, where answers go, how each route is authenticated) are its
    # log at INFO, whatever -v says: a long-running process is read through its log.
    logging.getLogger("oncall_memory").setLevel(min(logging.INFO, logging.getLogger().getEffectiveLevel()))
    # The store and the outbox are opened here, not in the app's start-up, so what stops them (another
    # `serve` holding the store, a read-only or full data dir) is the CLI's one clear line, not a traceback
    # from uvicorn's lifespan.
    with sock, Memory.open(settings) as memory, Outbox(settings.dir.outbox) as outbox:
        # The app tells the CLI on this data dir where to ask while it serves (service.json, see cli/remote.py).
        server = _server_class()(
            uvicorn.Config(
                create_app(settings, memory=memory, outbox=outbox, announce=True),
                host=settings.service.host,
                port=settings.service.port,
                log_level="info",
                log_config=uvicorn_config(settings.log_format),  # its lines timed, in our format
                proxy_headers=False,  # the app believes forwarded headers from ONCALL_MEMORY_FORWARDED_ALLOW_IPS only
            )
        )
        server.run(sockets=[sock])
    return 0 if server.started else EXIT_FAILED


def _server_class() -> type:
    import uvicorn

    from ..service.app import long_lived

    class Server(uvicorn.Server):
        """Uvicorn's server on the socket `serve` bound itself, saying where it runs as uvicorn does when it
        binds (given sockets, it says nothing)."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                long_lived()
            if self.started and sockets:
                host, port = sockets[0].getsockname()[:2]
                shown = f"[{host}]" if ":" in host else host
                logging.getLogger("uvicorn.error").info(
                    "Uvicorn running on http://%s:%d (Press CTRL+C to quit)", shown, port
                )

    return Server


def listening_socket(host: str, port: int) -> socket.socket:
    """The service's socket, bound and listening before anything else is done. Raises `ServeFailed` naming
    the address when it cannot be had (in use, not this machine's, no permission)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ServeFailed(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart reuses the port
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        hint = (
            " (another process is listening there: stop it, or choose a port with --port)"
            if exc.errno == errno.EADDRINUSE
            else ""
        )
        raise ServeFailed(f"cannot serve on {host}:{port}: {exc.strerror or exc}{hint}") from None
    return sock
