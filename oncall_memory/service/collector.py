"""The cyclic garbage collector, held off while a webhook's post becomes its jobs.

A 10,000-alert storm's post allocates a few hundred thousand objects (the parsed body, each alert's model, its
facts and its item) that all live until the post is answered. The collector runs every 700 allocations and
walks the young ones each time, and they are young for the whole post: held off, a 10,000-alert post's 202
came 0.1-0.2 s sooner (1.19 / 1.19 / 1.11 s -> 1.05 / 1.01 / 0.97 s, in process, median of 5, before and after
alternating). Nothing of it is cyclic garbage that needs the collector to be freed, and what a post holds is
bounded by the body limit. The collector runs again once the last post in flight is through (`long_lived` in
`app.py` keeps start-up's objects out of its way for good). A webhook's `jobs` reads its body and does no I/O
(a pager's API is read by refiners, on the dispatcher's thread), so the collector is off for as long as the
reading takes, in proportion to the post. Since a large group is claimed before its alerts are read
(`rule_alerts.READ_AT_ONCE`), that is about a third of a second for 10,000 alerts (4.7 MB), with fewer objects:
the body and each alert's validated model, the items being built later on the worker's thread.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holding = 0  # posts in flight with the collector held off
_was_on = False  # whether it ran before the first of them held it off


@contextmanager
def held_off() -> Iterator[None]:
    """No cyclic collection while the block runs (and while any other thread's block runs); the collector's
    state as it was once the last of them leaves. Reference counting frees what it always did."""
    global _holding, _was_on
    with _lock:
        if _holding == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _holding += 1
    try:
        yield
    finally:
        with _lock:
            _holding -= 1
            if _holding == 0 and _was_on:
                gc.enable()
