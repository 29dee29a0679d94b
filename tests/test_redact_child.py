"""Scanning in a child process (`redact/scan_process.py`), as a standalone `similar` does: the same findings as scanning
here, for every detector's example; scanning here again when the child has gone; no child where forking is not
safe."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

from test_redact import EXAMPLES, SECRETS

from oncall_memory.redact import scan_process as child

# Run in a process of its own: the child is forked from a process with one thread, which a test worker is not.
PROBE = """
import json, os, signal, sys
from oncall_memory.redact import engine
texts = json.load(sys.stdin)
assert engine.scan_in_child(), "no child forked"
pid = engine._child.pid
assert pid != os.getpid()
there = [engine.scan(t) for t in texts]
here = [engine._scan_here(t) for t in texts]
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
after = [engine.scan(t) for t in texts]  # the child is gone: scanned here, and said so on stderr
print(json.dumps({"there": there, "here": here, "after": after, "redacted": [engine.redact(t) for t in texts]}))
"""


def _texts() -> list[str]:
    examples = [template.replace("{}", secret) for _, template, secret in EXAMPLES]
    # Characters wider than a byte before and after a secret: the offsets must agree.
    return [*examples, *(text for text, _ in SECRETS), "caf\u00e9 password=hunter2hunter2 \u2603 \U0001f525 end"]


def test_the_child_finds_what_scanning_here_finds_and_scanning_goes_on_without_it():
    texts = _texts()
    done = subprocess.run(
        [sys.executable, "-c", PROBE], input=json.dumps(texts), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["there"] == out["here"]
    assert out["after"] == out["here"]
    assert "scanning here instead" in done.stderr
    # Every detector's example is found through the child: each secret is gone from its redacted text.
    for (name, _, secret), redacted in zip(EXAMPLES, out["redacted"], strict=False):
        assert secret not in redacted, name


def test_no_child_is_forked_beside_another_thread():
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert child.fork(lambda: None, lambda text: []) is None
    finally:
        stop.set()
        other.join()


LEAVES = """
import os
from oncall_memory.redact import engine
assert engine.scan_in_child()
assert engine.scan("password=hunter2hunter2")  # the child loaded and answered
print(engine._child.pid, flush=True)
os._exit(0)  # as the program leaves: nothing closed on the way out
"""


def test_the_child_leaves_when_the_command_does():
    import time
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", LEAVES], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    status = Path(f"/proc/{int(done.stdout)}/status")
    deadline = time.monotonic() + 60
    while status.exists() and "\nState:\tZ" not in status.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)  # it reads the end of its pipe, then leaves; a zombie has left
    assert not status.exists() or "\nState:\tZ" in status.read_text()


STUCK = """
import os, time
from oncall_memory.redact import engine
from oncall_memory.redact import scan_process as child
child.ANSWER_WITHIN = 0.5
engine.warm = lambda **_: time.sleep(600)  # a child that never gets to scanning
assert engine.scan_in_child()
pid = engine._child.pid
found = engine.scan("password=hunter2hunter2")
assert found == engine._scan_here("password=hunter2hunter2") and found, found
try:
    os.kill(pid, 0)
    print("still there")
except ProcessLookupError:
    print("stopped")
"""


def test_a_child_that_does_not_answer_is_stopped_and_the_text_scanned_here():
    done = subprocess.run([sys.executable, "-c", STUCK], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "stopped"
    assert "no answer in 0.5 s" in done.stderr


# As a subreaper, the wrapper adopts whatever the command leaves behind: nothing, if the command reaped its child.
ORPHANS = """
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
command = subprocess.run(sys.argv[1:], capture_output=True, text=True)
assert command.returncode == 0, command.stderr
assert "INC-1001" in command.stdout, command.stdout
time.sleep(0.5)
try:
    pid, _ = os.waitpid(-1, os.WNOHANG)
    print("left behind" if pid else "left behind, still running")
except ChildProcessError:
    print("none")
"""


def test_the_program_reaps_its_scanning_child(tmp_path):
    import os

    from conftest import FIXTURES

    env = {**os.environ, "ONCALL_MEMORY_DATA_DIR": str(tmp_path / "data"), "ONCALL_MEMORY_EMBEDDER": "fake"}
    cli = [sys.executable, "-m", "oncall_memory.cli"]
    subprocess.run([*cli, "ingest", str(FIXTURES / "incidents.jsonl")], env=env, check=True, capture_output=True)
    similar = [*cli, "similar", "--alert", str(FIXTURES / "alerts" / "crashloop-checkout.json")]
    done = subprocess.run(
        [sys.executable, "-c", ORPHANS, *similar], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "none"
