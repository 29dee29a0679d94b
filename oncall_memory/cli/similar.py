"""`similar` and `stats`: one command, two ways of answering it, sharing how the command line is read.

Through a running service (`ask_service`): the service owns the store, so the CLI asks it. Through a service
the CLI spent most of its start-up importing what it then did not need: pydantic and `Settings` (0.17 s), the
answer's models and the renderer (0.15 s). So the request is built from the command line as it stands, the
service validates it (a 422 says what to fix), redacts it where it enters, and renders the answer with the
CLI's own renderer (`POST /similar?format=text`): what is printed is what a lookup here prints.

In process (`cmd_similar`, `cmd_stats`): no service, one that does not answer, or a query that must be
redacted before it leaves this machine (plain HTTP to another host): the memory opened here, the model loaded
beside the store's opening and the alert's redaction.

Only three settings matter to a client, read here from the environment the way `Settings` reads them
(`tests/test_remote_cli.py` keeps the two equal): the data dir (whose service.json names a running
service), ONCALL_MEMORY_URL and ONCALL_MEMORY_API_TOKEN.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from ..datadir import LEGACY_DATA_DIR, DataDir, default_data_dir
from ..errors import InvalidInput, OncallMemoryError, ServiceUnreachable
from . import remote
from .common import err, legacy_data_dir_warning, terminal_style
from .leaving import answered
from .when import moment, past

if TYPE_CHECKING:
    from ..answer.retrieve import Lookup
    from ..domain.alert import Alert, Filters
    from ..settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("similar", help="past incidents like an alert, with what fixed them")
    p.add_argument("text", nargs="?", help="the alert text")
    p.add_argument(
        "--alert", metavar="FILE", help="a JSON alert: text plus facts (service, env, flavor, component_tags)"
    )
    p.add_argument("--service", help="only incidents of this service")
    p.add_argument("--env", help="only incidents in this env")
    p.add_argument("--flavor", help="only incidents on this flavor (eks, aks, gke, ...)")
    p.add_argument("--tag", action="append", help="only incidents with this component tag (repeatable)")
    p.add_argument("--status", help="only incidents with this status")
    p.add_argument(
        "--since", type=moment, help="only incidents opened from this moment on (2026-11-01, yesterday, 7d, 36h)"
    )
    p.add_argument("--limit", type=int, default=5, help="how many (1..100, default 5)")
    p.add_argument(
        "--mode",
        choices=["hybrid", "dense", "lexical"],
        default="hybrid",
        help="search by meaning and words (default), meaning only, or words only",
    )
    p.add_argument("--no-rank", action="store_true", help="search order only, no fact-based ranking")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print a JSON list")
    out.add_argument("--jsonl", action="store_true", help="print one JSON object per neighbour, one per line")
    p.set_defaults(func=cmd_similar)

    p = sub.add_parser("stats", help="the collection, its model, dimension and count")
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p.set_defaults(func=cmd_stats)


# -- what a client reads of the settings ----------------------------------------------------------------------

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


def ask_service(args: argparse.Namespace) -> int | None:
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
        return ask_stats(args, url)
    if not remote.private_channel(url.url):
        return None  # plain HTTP to another machine: the full command redacts the query first
    return ask_similar(args, url, alert_data(args), filters_data(args))


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


def ask_similar(
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


def ask_stats(args: argparse.Namespace, url: remote.Service) -> int | None:
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


# -- in process -----------------------------------------------------------------------------------------------


def alert_from_args(args: argparse.Namespace, data: dict[str, Any] | None = None) -> Alert:
    """The alert the command line gives (`data`: as `alert_data` read it already), validated and redacted."""
    from pydantic import ValidationError

    from ..domain.alert import Alert
    from ..domain.rejected import validation_message

    data = alert_data(args) if data is None else data
    try:
        return Alert.model_validate(data)
    except ValidationError as exc:
        fields = ", ".join(f for f in Alert.model_fields if f != "fact_sources")
        raise InvalidInput(f"alert: {validation_message(exc, known=f'an alert has {fields}')}") from exc


def filters_from_args(args: argparse.Namespace) -> Filters:
    from pydantic import ValidationError

    from ..domain.alert import Filters
    from ..domain.rejected import validation_message

    past(args.since, "--since")
    try:
        return Filters(
            service=args.service,
            env=args.env,
            flavor=args.flavor,
            component_tags=args.tag or [],
            status=args.status,
            since=args.since,
        )
    except ValidationError as exc:
        raise InvalidInput(f"filter: {validation_message(exc)}") from exc


def cmd_similar(args: argparse.Namespace, settings: Settings) -> int:
    url = None if getattr(args, "local_only", False) else remote.service_url(settings)
    if url:
        # Over plain HTTP to another machine (`ask_service` asks one on a private channel itself): the query is
        # redacted here, before it leaves, then asked the same way.
        alert, filters = alert_from_args(args), filters_from_args(args)
        code = ask_similar(
            args,
            url,
            alert.model_dump(mode="json", exclude_defaults=True),
            filters.model_dump(mode="json", exclude_defaults=True),
        )
        if code is not None:
            return code
    from ..embedders import make_embedder

    given = alert_data(args)  # an unreadable alert file is the first thing said
    # One thread for the model: it embeds one alert, 1-2 ms more on one core, while a second thread of ONNX
    # Runtime's spins on the other core as it is made, beside the secret catalogue's load (0.49 -> 0.46 s).
    with make_embedder(settings, threads=1) as embedder:
        loading = None
        if args.mode != "lexical":
            # The model loads (0.25 s, mostly outside the GIL) from here on: while the memory's code is
            # imported, the store opens and the alert is read and redacted (which waits for the secret
            # catalogue, loading on a thread of its own). A failure here is raised again by the lookup's load.
            loading = threading.Thread(target=_quietly, args=(embedder.load,), name="model", daemon=True)
            loading.start()
        from ..memory import Memory

        with Memory.open(settings, embedder=embedder) as memory:
            memory.check_contract()  # "nothing stored yet" at once, not after the model has loaded
            alert, filters = alert_from_args(args, given), filters_from_args(args)
            from ..redact.engine import done_scanning

            done_scanning()  # the alert was the one text to scan: a scanning child leaves beside the lookup
            if loading is not None:
                loading.join()
            started = time.perf_counter()
            lookup = memory.similar(alert, filters=filters, limit=args.limit, mode=args.mode, rank=not args.no_rank)
            elapsed = time.perf_counter() - started
            # Said before the store closes (its flush and close, 0.03-0.05 s): the responder reads meanwhile,
            # through a pipe too (where Python would hold the answer until the process ends).
            _print_lookup(args, lookup, alert.text, elapsed)
            sys.stdout.flush()

            answered()  # the program leaves here, the store unclosed: nothing was written to it
    return 0


def _quietly(load: Callable[[], None]) -> None:
    try:
        load()
    except Exception:  # noqa: BLE001 - the lookup loads again and reports it
        pass


def _print_lookup(args: argparse.Namespace, lookup: Lookup, text: str, elapsed: float) -> None:
    from ..answer.render import terminal

    if args.json or args.jsonl:
        if lookup.degraded:
            err(lookup.degraded)
        if args.json:
            print(json.dumps([n.model_dump(mode="json") for n in lookup.neighbours], indent=2))
        for n in lookup.neighbours if args.jsonl else []:
            print(json.dumps(n.model_dump(mode="json")), flush=True)  # a reader sees each as it comes
        return
    colour, width = terminal_style()
    print(terminal(lookup, text, elapsed, colour=colour, width=width))


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    """Read here: a running service was asked first (`ask_service`), or there is none."""
    from ..memory import Memory

    with Memory.open(settings) as memory:
        info = memory.stats()
        code = print_stats(args, info)
        if code == 0:
            answered()
    return code
