"""How a quick command leaves: at once, once its answer is out (`console` sets `at_once` for a command of
`QUICK_EXIT`; `answered` is called by the command when its answer is flushed)."""

from __future__ import annotations

import logging
import os
import sys

# Commands that only read: as a program, they leave without the interpreter's teardown, which frees every
# module and the model's runtime one object at a time (about 0.1 s of a 1 s `similar`, timed around the exit),
# and once their answer is out, without closing the store (`answered`).
QUICK_EXIT = frozenset({"similar", "stats"})
at_once = False  # set by `console` for a QUICK_EXIT command; never under `main` alone (tests, agents)


def answered() -> None:
    """A quick command's answer is out and flushed: under `console`, leave now. What is still open is only
    read from, and the kernel lets go of it at the exit sooner than closing does: the store's flush and close
    took 0.03-0.05 s after every standalone `similar`, for a lookup that wrote nothing (its lock is a
    `flock`, released with the process). Under `main` alone (tests, a caller's own process) it returns, and
    the command closes what it opened."""
    if at_once:
        leave(0)


def leave(code: int) -> None:
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that left, a stream closed: nothing more to say
            pass
    let_the_scanning_child_go()  # reaped, not left to an init that may not reap it
    os._exit(code)


def let_the_scanning_child_go() -> None:
    """`engine.stop_scanning_child`, where the command loaded the engine (a command that redacts nothing
    never imports it)."""
    if (redacting := sys.modules.get("oncall_memory.redact.engine")) is not None:
        redacting.stop_scanning_child()
