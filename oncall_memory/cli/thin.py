"""`similar` and `stats` as a thin client of a running service.

Through a service the CLI spent most of its start-up importing what it then did not need: pydantic and
`Settings` (0.17 s), the answer's models and the renderer (0.15 s). Here the request is built from the
command line as it stands, the service validates it (a 422 says what to fix), redacts it where it enters,
and renders the answer with the CLI's own renderer (`POST /similar?format=text`): what is printed is what
a lookup without the service prints.

Only three settings matter to a client, read here from the environment the way `Settings` reads them
(`tests/test_remote_cli.py` keeps the two equal): the data dir (whose service.json names a running
service), ONCALL_MEMORY_URL and ONCALL_MEMORY_API_TOKEN. Whatever this cannot do (no service; one that
does not answer; a query that must be redacted before it leaves this machine) falls to the full command.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from ..datadir import LEGACY_DATA_DIR, DataDir, default_data_dir
from ..errors import InvalidInput, OncallMemoryError, ServiceUnreachable
from . import remote
from .common import err, legacy_data_dir_warning, terminal_style
from .when import past

COMMANDS = frozenset({"similar", "stats"})


def setting(name: str) -> str | None:
    """ONCALL_MEMORY_<NAME> as pydantic-settings reads it: the name in any case."""
    environ = {key.lower(): value for key, value in os.environ.items()}
    return environ.get(f"oncall_memory_{name}")


def data_dir() -> Path:
    named = setting("data_dir")
    return Path(named) if named is not None else default_data_dir()


def api_token() -> str | None:
    token = setting("api_token")
    return token if token and token.strip() else None  # `VAR=` means not set, as in Settings


def plain_http() -> bool:
    """ONCALL_MEMORY_ALLOW_PLAIN_HTTP as pydantic reads a bool."""
    return (setting("allow_plain_http") or "").strip().lower() in ("1", "true", "yes", "on", "t", "y")


def run(args: argparse.Namespace) -> int | None:
    """The command's exit status, asked of a running service; None when the full command must run it
    (it then looks up by itself, without trying the service again when `args.local_only` is set)."""
    named = setting("data_dir")
    data = Path(named) if named is not None else default_data_dir()
    url = remote.find_service(setting("url"), DataDir(data), api_token=api_token(), plain_http=plain_http())
    if url is None:
        return None
    if named is None and data == LEGACY_DATA_DIR:
        legacy_data_dir_warning()
    if args.command == "stats":
        return stats(args, url)
    if not remote.private_channel(url.url):
        return None  # plain HTTP to another machine: the full command redacts the query first
    return similar(args, url, alert_data(args), filters_data(args))


# The fields of an alert file (`alert.Alert`'s, kept equal by a test: this module stays free of the models).
ALERT_FIELDS = ("text", "service", "env", "flavor", "component_tags", "signature", "metrics")
ALERT_EXAMPLE = 'give a JSON object, e.g. {"text": "pods crashing on start", "service": "checkout"}'


def alert_data(args: argparse.Namespace) -> dict[str, Any]:
    """The alert as given: a JSON file's fields, its text replaced by a text given on the command line."""
    data: Any = {}
    if args.alert:
        try:
            raw = Path(args.alert).read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"cannot read alert file {args.alert}: {exc}") from exc
        if not raw.strip():
            raise InvalidInput(f"alert file {args.alert} is empty: {ALERT_EXAMPLE}")
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(f"alert file {args.alert} is not JSON ({exc}): {ALERT_EXAMPLE}") from exc
        if not isinstance(data, dict):
            raise InvalidInput(
                f"alert file {args.alert}: give a JSON object (its text plus facts), not {type(data).__name__}"
            )
        if unknown := [k for k in data if k not in ALERT_FIELDS]:
            guess = difflib.get_close_matches(str(unknown[0]), ALERT_FIELDS, n=1)
            raise InvalidInput(
                f"alert: {unknown[0]} is not a known field (an alert has {', '.join(ALERT_FIELDS)})"
                + (f": did you mean {guess[0]}?" if guess else "")
            )
    if args.text:
        data["text"] = args.text
    if "text" not in data:
        raise InvalidInput('give the alert text: oncall-memory similar "TEXT" (or --alert FILE.json)')
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        # A `"\ud800"` escape (or bytes the terminal could not decode) is no text any encoding can hold.
        where = f"alert file {args.alert}" if args.alert else "the alert text"
        raise InvalidInput(
            f"{where} holds a lone surrogate (an escape like \\ud800 without its pair, or bytes that are not "
            "UTF-8): remove it, or write the character itself"
        ) from None
    return data


def filters_data(args: argparse.Namespace) -> dict[str, Any]:
    past(args.since, "--since")
    given = {
        "service": args.service,
        "env": args.env,
        "flavor": args.flavor,
        "component_tags": args.tag or None,
        "status": args.status,
        "since": args.since.isoformat() if args.since else None,
    }
    return {name: value for name, value in given.items() if value is not None}


def similar(
    args: argparse.Namespace, url: remote.Service, alert: dict[str, Any], filters: dict[str, Any]
) -> int | None:
    """Ask the service; print its answer (rendered there, or its JSON). None when it did not answer."""
    body = {"alert": alert, "filters": filters, "limit": args.limit, "mode": args.mode, "rank": not args.no_rank}
    query: dict[str, str] = {}
    if not (args.json or args.jsonl):
        colour, width = terminal_style()
        query = {"format": "text", **({"colour": "true"} if colour else {}), **({"width": str(width)} if width else {})}
    try:
        response = remote.call(url, "POST", "/similar" + (f"?{urlencode(query)}" if query else ""), body)
    except ServiceUnreachable as exc:
        err(f"the service at {url} did not answer ({exc}); looking up here instead")
        args.local_only = True
        return None
    if response.status_code >= 400:
        error = InvalidInput if response.status_code < 500 else OncallMemoryError
        raise error(f"the service at {url}: {remote.detail(response)}")
    if not query:
        if degraded := response.headers.get("x-lookup-degraded"):
            err(degraded)
        neighbours = response.json()
        if args.json:
            print(json.dumps(neighbours, indent=2))
        for n in neighbours if args.jsonl else []:
            print(json.dumps(n), flush=True)  # a reader sees each as it comes
        return 0
    print(response.text + f"\n\n(asked the service at {url})")
    return 0


def stats(args: argparse.Namespace, url: remote.Service) -> int | None:
    try:
        response = remote.call(url, "GET", "/stats")
    except ServiceUnreachable:
        args.local_only = True
        return None
    if response.status_code >= 400:  # an older service, or one without the store: look up here
        args.local_only = True
        return None
    return print_stats(args, response.json(), through=url.url)


def print_stats(args: argparse.Namespace, info: dict, through: str | None = None) -> int:
    if args.json:
        print(json.dumps(info))
    else:
        width = max((len(key) for key in info), default=0)
        for key, value in info.items():
            print(f"{key:>{width}}: {value}")
        if through:
            print(f"\n(asked the service at {through})")
    return 0
