"""Asking the memory: `similar`, `stats`, `eval`."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from urllib.parse import unquote

from pydantic import ValidationError

from ..alert import Alert, Filters
from ..answer.confidence import overall
from ..answer.ranking import Neighbour
from ..answer.render import terminal
from ..answer.retrieve import Lookup
from ..errors import InvalidInput, OncallMemoryError
from ..ingest.backlog import validation_message
from ..redact import already_redacted
from ..settings import Settings
from . import remote
from .common import err, terminal_style
from .when import moment

# The labelled sets ship inside the package (in a wheel and the Docker image too); they label the sample
# backlog, fixtures/incidents.jsonl.
_SETS = Path(__file__).resolve().parent.parent / "evalsets"
SHIPPED_SETS = (_SETS / "labels.jsonl", _SETS / "alerts.jsonl", _SETS / "nomatch.jsonl")


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
    p.add_argument("--mode", choices=["hybrid", "dense", "lexical"], default="hybrid")
    p.add_argument("--no-rank", action="store_true", help="search order only, no fact-based ranking")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print a JSON list")
    out.add_argument("--jsonl", action="store_true", help="print one JSON object per neighbour, one per line")
    p.set_defaults(func=cmd_similar)

    p = sub.add_parser("stats", help="the collection, its model, dimension and count")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser(
        "eval", help="recall@3/5, hit@1 and MRR on labelled queries, per retrieval configuration and for BM25"
    )
    p.add_argument(
        "labels",
        nargs="*",
        type=Path,
        default=list(SHIPPED_SETS),
        help='JSONL files: {"text": ..., facts..., "relevant": [ids]} or {"pager": ..., "payload": ..., '
        '"relevant": [ids]} per line (default: both shipped sets)',
    )
    p.add_argument("--text-only", action="store_true", help="drop the queries' facts: ranking without pager labels")
    p.add_argument(
        "--feedback-replay",
        action="store_true",
        help="give simulated feedback on half the queries and score the rest before and after",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)


def alert_from_args(args: argparse.Namespace) -> Alert:
    data: dict = {}
    if args.alert:
        try:
            data = json.loads(Path(args.alert).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidInput(f"cannot read alert file {args.alert}: {exc}") from exc
    if args.text:
        data["text"] = args.text
    if "text" not in data:
        raise InvalidInput('give the alert text: oncall-memory similar "TEXT" (or --alert FILE.json)')
    try:
        return Alert.model_validate(data)
    except ValidationError as exc:
        fields = ", ".join(f for f in Alert.model_fields if f != "fact_sources")
        raise InvalidInput(f"alert: {validation_message(exc, known=f'an alert has {fields}')}") from exc


def filters_from_args(args: argparse.Namespace) -> Filters:
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
    url = remote.service_url(settings)
    if url:
        # The service redacts what it is sent, where it enters, and sends the redacted text back to print:
        # read here unredacted, the query need not load the secret catalogue in this process (0.4 s). Only
        # over a channel nobody else reads: this machine, or TLS; over plain HTTP elsewhere it is redacted here.
        if remote.private_channel(url):
            with already_redacted():
                alert, filters = alert_from_args(args), filters_from_args(args)
        else:
            alert, filters = alert_from_args(args), filters_from_args(args)
        try:
            return _similar_remote(args, settings, url, alert, filters)
        except remote.Unreachable as exc:
            err(f"the service at {url} did not answer ({exc}); looking up here instead")
    alert, filters = alert_from_args(args), filters_from_args(args)
    from ..memory import Memory

    with Memory.open(settings) as memory:
        memory.check_contract()  # "nothing stored yet" at once, not after the model has loaded
        if args.mode != "lexical":
            memory.embedder.load()  # a local model loads lazily: keep that out of the lookup time
        started = time.perf_counter()
        lookup = memory.similar(alert, filters=filters, limit=args.limit, mode=args.mode, rank=not args.no_rank)
        elapsed = time.perf_counter() - started
    _print_lookup(args, lookup, alert.text, elapsed)
    return 0


def _print_lookup(args: argparse.Namespace, lookup: Lookup, text: str, elapsed: float, footer: str = "") -> None:
    if args.json or args.jsonl:
        if lookup.degraded:
            err(lookup.degraded)
        if args.json:
            print(json.dumps([n.model_dump(mode="json") for n in lookup.neighbours], indent=2))
        for n in lookup.neighbours if args.jsonl else []:
            print(json.dumps(n.model_dump(mode="json")), flush=True)  # a reader sees each as it comes
        return
    colour, width = terminal_style()
    print(terminal(lookup, text, elapsed, colour=colour, width=width) + footer)


def _similar_remote(args: argparse.Namespace, settings: Settings, url: str, alert: Alert, filters: Filters) -> int:
    """The lookup asked of a running service: the same answer, the model already loaded."""
    started = time.perf_counter()
    body = {
        "alert": alert.model_dump(mode="json", exclude_defaults=True),
        "filters": filters.model_dump(mode="json", exclude_defaults=True),
        "limit": args.limit,
        "mode": args.mode,
        "rank": not args.no_rank,
    }
    response = remote.post(settings, url, "/similar", body)
    elapsed = time.perf_counter() - started
    if response.status_code >= 400:
        error = InvalidInput if response.status_code < 500 else OncallMemoryError
        raise error(f"the service at {url}: {remote.detail(response)}")
    neighbours = [Neighbour.model_validate(n) for n in response.json()]
    lookup = Lookup.model_validate(
        {
            "mode": response.headers.get("x-lookup-mode", args.mode),
            "ranked": not args.no_rank,
            # The lookup's own verdict; from a service older than that header, the best neighbour's (its rule).
            "confidence": response.headers.get("x-lookup-confidence") or overall([n.confidence for n in neighbours]),
            "degraded": response.headers.get("x-lookup-degraded"),
            "signature_key": response.headers.get("x-lookup-signature"),
            "neighbours": neighbours,
        }
    )
    echoed = response.headers.get("x-lookup-text")
    text = ""
    if not (args.json or args.jsonl):  # printed: the service's redacted text, or a long one redacted here
        text = unquote(echoed) if echoed is not None else alert_from_args(args).text
    _print_lookup(args, lookup, text, elapsed, footer=f"\n\n(asked the service at {url})")
    return 0


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    url = remote.service_url(settings)
    if url:
        try:
            response = remote.get(settings, url, "/stats")
            if response.status_code < 400:
                return _print_stats(args, response.json())
        except remote.Unreachable:
            pass
    from ..memory import Memory

    with Memory.open(settings) as memory:
        info = memory.stats()
    return _print_stats(args, info)


def _print_stats(args: argparse.Namespace, info: dict) -> int:
    if args.json:
        print(json.dumps(info))
    else:
        for key, value in info.items():
            print(f"{key:>12}: {value}")
    return 0


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from ..answer.confidence import MIN_EACH, MIN_VERDICTS
    from ..answer.evaluate import (
        Abstention,
        abstention,
        as_json,
        evaluate,
        format_replay,
        format_table,
        read_labels,
        replay_feedback,
    )
    from ..memory import Memory

    sets = {path: read_labels(path) for path in args.labels}
    reports, stood, replays = {}, {}, {}
    with Memory.open(settings) as memory:
        for path, queries in sets.items():
            reports[path] = evaluate(memory, queries, with_facts=not args.text_only)
            stood[path] = abstention(memory, queries, with_facts=not args.text_only)
            if args.feedback_replay:
                replays[path] = replay_feedback(memory, queries)
        team = memory.calibration.refit
    overall = sum(stood.values(), Abstention(0, 0, 0, 0))
    if args.json:
        single = len(reports) == 1
        print(
            as_json(reports[path], stood[path])
            if single
            else "{" + ",\n".join(f"{json.dumps(str(p))}: {as_json(r, stood[p])}" for p, r in reports.items()) + "}"
        )
    else:
        print(
            "\n\n".join(
                f"{path}\n{format_table(r, sets[path], stood[path])}"
                + (f"\n\n{format_replay(replays[path])}" if path in replays else "")
                for path, r in reports.items()
            )
        )
        if len(sets) > 1:
            print(f"\nall sets, hybrid+ranking: {overall.line()}")
        print(
            f"\n{team.line()}"
            if team
            else "\nteam calibration: none yet (the shipped one; refitted once "
            f"{MIN_VERDICTS} verdicts on suggestions have arrived, at least {MIN_EACH} of each kind)"
        )
    return 0
