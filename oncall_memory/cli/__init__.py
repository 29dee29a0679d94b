"""The `oncall-memory` command: wiring only. Each sub-command builds settings, opens the `Memory`
and calls it; the modules here group the commands by concept.

Exit status: 0 done; 1 failed (embedder or store down; nothing half-written); 2 bad input or usage;
3 ingested, but some backlog lines were rejected (they are listed on stderr).
"""

from __future__ import annotations

import argparse
import errno
import gc
import logging
import os
import sqlite3
import sys
from collections.abc import Sequence

from .. import log_format
from ..datadir import cannot_write, no_space
from ..errors import InvalidInput, OncallMemoryError
from . import agents, answers, config, deliveries, evaluation, ingest, leaving, maintenance, run, similar, users
from .common import EXIT_FAILED, EXIT_USAGE, err, legacy_data_dir_warning, said

# The command modules import what their commands use when they run, not here: building the parser, and
# `similar` asked of a running service (`similar.ask_service`), then start in a fraction of what the whole package takes.


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oncall-memory", description="Have we seen this alert before, and what fixed it?"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (ingest, similar, evaluation, maintenance, run, deliveries, answers, config, agents, users):
        module.register(sub)
    return parser


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    # `schedule` parses its own options (schedule.main): hand it whatever this parser does not know.
    args, rest = parser.parse_known_args(argv)
    if rest and args.command != "schedule":  # the command's own usage, not the list of every command
        _command_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(rest)}")
    args.options = rest
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    log_format.configure("text")  # every line with its time (ONCALL_MEMORY_LOG_FORMAT=json once read)
    # Whatever this command writes under the data dir is its owner's only (datadir.make_private).
    os.umask(os.umask(0) | 0o077)
    try:
        if args.command in similar.COMMANDS and (code := similar.ask_service(args)) is not None:
            sys.stdout.flush()
            return code
        code = _with_settings(args)
        sys.stdout.flush()  # inside the try: a reader that left shows here, not at exit
        return code
    except BrokenPipeError:
        # `similar --json | head`: the reader has what it wanted. Say nothing; stdout goes to devnull so
        # the interpreter's own flush at exit does not complain either (Python's documented advice).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except InvalidInput as exc:
        err(said(exc))
        return EXIT_USAGE
    except OncallMemoryError as exc:
        err(said(exc))
        return EXIT_FAILED
    except (OSError, sqlite3.OperationalError) as exc:
        where = similar.data_dir()
        # The disk filled up where no size was known beforehand (a backup, a side file): say so, plainly.
        if getattr(exc, "errno", None) == errno.ENOSPC or "disk is full" in str(exc):
            err(no_space(where, "finish") + f" ({exc})")
            return EXIT_FAILED
        if why := cannot_write(exc):
            err(
                f"{where} cannot be written ({why}): every command takes the store's lock file there. Mount it "
                "read-write, or copy it somewhere writable and point ONCALL_MEMORY_DATA_DIR at the copy"
            )
            return EXIT_FAILED
        if isinstance(exc, OSError) and exc.strerror:  # permissions, a missing folder: one line, what and where
            err(f"{exc.strerror}: {exc.filename or where}" + (f" -> {exc.filename2}" if exc.filename2 else ""))
            return EXIT_FAILED
        raise


def console() -> None:
    """The `oncall-memory` program: `main`, then the exit status. A command of `QUICK_EXIT` leaves at once, its
    output flushed; every other one exits as Python does (atexit handlers: a flow's, a server's)."""
    # Before numpy loads: OpenBLAS starts a worker per core with it, and each spins on a core for a while before
    # it sleeps (about 70 ms of CPU here). Nothing here multiplies matrices big enough to use them (the model runs
    # on ONNX Runtime's own threads), and on two cores the spinning slowed what runs beside it: a standalone
    # `similar` 0.52 -> 0.48 s. A value the user set stands.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    argv = sys.argv[1:]
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in leaving.QUICK_EXIT:
        # What a quick command builds (modules, schemas, the store, the model) lives until it leaves, at once:
        # the cyclic collector would only walk it again and again as it grows (113 young, 10 middle and one
        # or two full collections, about 45 ms of a `similar`'s main thread). One lookup's own garbage is
        # small, and the process ends with it.
        gc.disable()
        leaving.at_once = True
    try:
        code = main(argv)
    finally:
        leaving.at_once = False  # only this run leaves at once: not a `main` called later in the same process
        leaving.let_the_scanning_child_go()  # (a program leaves at once anyway; a test's process goes on)
    if command in leaving.QUICK_EXIT:
        leaving.leave(code)
    sys.exit(code)


# Commands that redact what they are given as soon as they have read it (the alert, the backlog).
REDACTING = frozenset({"similar", "feedback", "ingest", "eval"})


def _with_settings(args: argparse.Namespace) -> int:
    """The command with the whole configuration; a setting that does not validate is a usage error."""
    if args.command in REDACTING:
        from ..redact.engine import load_in_background, scan_in_child

        # A standalone `similar`, as a program: what scanning needs loads in a child process on the other core
        # and scans there (`redact/scan_process.py`); every other command, or where a child cannot be forked safely,
        # loads it on a thread.
        if not (args.command == "similar" and leaving.at_once and scan_in_child()):
            load_in_background()
    from pydantic import ValidationError

    from ..env_values import SettingTyped
    from ..settings import Settings

    try:
        settings = Settings()
        log_format.configure(settings.log_format)
        if settings.on_legacy_data_dir():
            legacy_data_dir_warning()
        code: int = args.func(args, settings)
        return code
    except ValidationError as exc:
        from ..settings import configuration_error

        err(f"configuration: {configuration_error(exc)}")
        return EXIT_USAGE
    except SettingTyped as exc:
        err(f"configuration: {exc}")
        return EXIT_USAGE
