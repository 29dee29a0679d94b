"""`eval`: the memory measured on labelled queries, per retrieval configuration and beside BM25."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..settings import Settings

# The labelled sets ship inside the package (in a wheel and the Docker image too); they label the sample
# backlog, fixtures/incidents.jsonl.
_SETS = Path(__file__).resolve().parent.parent / "evalsets"
SHIPPED_SETS = (_SETS / "labels.jsonl", _SETS / "alerts.jsonl", _SETS / "nomatch.jsonl")


def register(sub: argparse._SubParsersAction) -> None:
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
