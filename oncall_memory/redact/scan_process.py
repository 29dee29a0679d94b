"""Scanning in a process of its own, for a one-shot command: a standalone `similar`.

A command that redacts one alert loaded the secret catalogue (Kingfisher's rules, 0.3 s from its compiled
cache) on a thread, beside its imports. The load itself lets go of the GIL, but Kingfisher's package, the
vendors' table and the detectors' RE2 sets do not, and on two cores the main thread's imports waited for them.
Here a child forked as the command starts loads all of it on the other core, and the command sends it each
text to scan over a pipe: the same detectors, the same findings, in another process.

Forked only where that is safe: on Linux, from a process with one thread, before anything is opened. Anything
that goes wrong (no fork, a child that died) falls back to scanning in this process: a scan is never skipped.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import struct
import sys
import threading
from collections.abc import Callable
from typing import IO

log = logging.getLogger(__name__)
# The child leaves by this, taken as the module loads: a caller that replaces `os._exit` (a test of the program's
# quick exit does) must not keep a copy of its process running its code.
_leave = os._exit
_HEADER = struct.Struct(">I")  # each message: its length, then its bytes
# Seconds a scan waits for the child: its first answer waits for the catalogue's load (0.3 s from Kingfisher's
# compiled cache, about 3 s the first time on a machine). A child stuck longer is stopped, and the scan is done
# here.
ANSWER_WITHIN = 60.0
# A text is sent as UTF-8 with its lone surrogates kept (a JSON "\ud800" reads as one), so offsets agree.
_ENCODING = ("utf-8", "surrogatepass")

# Libraries that may have started threads of their own, which `threading` does not count, or hold state a
# forked copy cannot use (the catalogue itself, once loaded): a process that has imported one is not forked.
_NATIVE_THREADS = ("kingfisher_sdk", "onnxruntime", "qdrant_edge", "numpy", "torch", "tokenizers")

Scan = Callable[[str], list[tuple[tuple[int, int], str]]]


class Child:
    """`scan` run in a child process, over two pipes; `here`, the same scan in this process, is what every
    call falls back to once the child cannot answer."""

    def __init__(self, pid: int, requests: IO[bytes], replies: IO[bytes], here: Scan):
        self.pid = pid
        self._requests, self._replies = requests, replies
        self._here = here
        self._lock = threading.Lock()  # one request on the pipes at a time
        self._gone = False

    def scan(self, text: str) -> list[tuple[tuple[int, int], str]]:
        with self._lock:
            if not self._gone:
                try:
                    data = text.encode(*_ENCODING)
                    self._requests.write(_HEADER.pack(len(data)) + data)
                    self._requests.flush()
                    if not select.select([self._replies], [], [], ANSWER_WITHIN)[0]:
                        raise TimeoutError(f"no answer in {ANSWER_WITHIN:g} s")
                    return [((a, b), name) for (a, b), name in json.loads(_message(self._replies))]
                except (OSError, ValueError, EOFError) as exc:
                    log.warning("the scanning child process stopped (%s): scanning here instead", exc)
                    self.close()
        return self._here(text)

    def release(self) -> None:
        """No more texts: the child leaves as it reads the end of its pipe, beside whatever this process does
        next. A scan after this one is done here."""
        self._gone = True
        for pipe in (self._requests, self._replies):
            try:
                pipe.close()
            except OSError:
                pass

    def close(self) -> None:
        """Let the child go and reap it (stopped, if it has not left yet). Reaped here, because where nothing
        else reaps an orphan (a container whose first process is not an init) it would stay a zombie."""
        self.release()
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def fork(prepare: Callable[[], None], scan: Scan) -> Child | None:
    """A child that runs `prepare` (loads what scanning needs) and then `scan` on each text it is sent; None
    where forking is not safe (not Linux, another thread running, a threaded library loaded) or fails."""
    if sys.platform != "linux" or threading.active_count() > 1 or any(m in sys.modules for m in _NATIVE_THREADS):
        return None
    requests_in, requests_out = os.pipe()  # (read end, write end): texts to the child
    replies_in, replies_out = os.pipe()  # findings back
    try:
        pid = os.fork()
    except OSError:
        for fd in (requests_in, requests_out, replies_in, replies_out):
            os.close(fd)
        return None
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(requests_out)
            os.close(replies_in)
            # Not the caller's terminal or pipes: `similar | head` ends when the command does, not when this does.
            quiet = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(quiet, fd)
            prepare()
            _serve(scan, os.fdopen(requests_in, "rb"), os.fdopen(replies_out, "wb"))
            code = 0
        finally:
            _leave(code)  # no atexit handlers, no flushing of the parent's buffers
    os.close(requests_in)
    os.close(replies_out)
    return Child(pid, os.fdopen(requests_out, "wb"), os.fdopen(replies_in, "rb"), scan)


def _serve(scan: Scan, requests: IO[bytes], replies: IO[bytes]) -> None:
    """Scan each text sent until the parent closes its end."""
    while True:
        try:
            text = _message(requests).decode(*_ENCODING)
        except EOFError:
            return
        body = json.dumps(scan(text)).encode()
        replies.write(_HEADER.pack(len(body)) + body)
        replies.flush()


def _message(pipe: IO[bytes]) -> bytes:
    header = _exactly(pipe, _HEADER.size)
    return _exactly(pipe, _HEADER.unpack(header)[0])


def _exactly(pipe: IO[bytes], n: int) -> bytes:
    data = pipe.read(n)
    if data is None or len(data) < n:
        raise EOFError("the other end closed")
    return data
