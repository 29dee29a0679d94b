"""Asking the memory: `similar`, `stats`, `eval`."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from . import remote, thin
from .common import err, terminal_style
from .leaving import answered
from .when import moment, past

if TYPE_CHECKING:
    from ..answer.retrieve import Lookup
    from ..domain.alert import Alert, Filters
    from ..settings import Settings

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
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p.set_defaults(func=cmd_eval)


def alert_from_args(args: argparse.Namespace, data: dict[str, Any] | None = None) -> Alert:
    """The alert the command line gives (`data`: as `thin.alert_data` read it already), validated and redacted."""
    from pydantic import ValidationError

    from ..domain.alert import Alert
    from ..domain.rejected import validation_message

    data = thin.alert_data(args) if data is None else data
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
        # Over plain HTTP to another machine (`thin` asks a service on a private channel itself): the query is
        # redacted here, before it leaves, then asked the same way.
        alert, filters = alert_from_args(args), filters_from_args(args)
        code = thin.similar(
            args,
            url,
            alert.model_dump(mode="json", exclude_defaults=True),
            filters.model_dump(mode="json", exclude_defaults=True),
        )
        if code is not None:
            return code
    from ..embedders import make_embedder

    given = thin.alert_data(args)  # an unreadable alert file is the first thing said
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
    """Read here: a running service was asked first (`thin`), or there is none."""
    from ..memory import Memory

    with Memory.open(settings) as memory:
        info = memory.stats()
        code = thin.print_stats(args, info)
        if code == 0:
            answered()
    return code


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from ..answer.confidence import MIN_EACH, MIN_VERDICTS
    from ..evaluation import (
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
