"""How long `oncall-memory similar` takes, wall clock, standalone and through a running service, in one run.

    python -m bench.perf.cli [--runs 5]

The local model (all-MiniLM-L6-v2) on the fixtures, Edge. Standalone, each call starts Python, opens the
store and loads the model (ONNX Runtime once exported; the first ingest exports it); through the
service (`oncall-memory serve` on the same data dir, found through <data dir>/service.json), the model is
loaded already.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .serving import Serve

ROOT = Path(__file__).resolve().parents[2]
ALERT = str(ROOT / "fixtures" / "alerts" / "crashloop-checkout.json")


CPU: list[float] = []  # each run's user + system seconds, in the order run
SHOWN: list[float] = []  # each run's seconds until its first byte of output, in the order run


def _adopt_orphans() -> None:
    """Become the subreaper of what the commands fork (Linux `prctl(PR_SET_CHILD_SUBREAPER)`), so that a
    process a command leaves behind is reparented here and its CPU counted with the command's."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _reap_orphans() -> None:
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def run(data: Path, *argv: str, reap: bool = True) -> float:
    """One command's wall clock. `reap`: then wait for what it left behind (not while the service, a child of
    this process too, runs)."""
    # As installed, Python keeps its bytecode: a PYTHONDONTWRITEBYTECODE left in the environment (CI images
    # set it) makes every start compile the package again, about 0.1 s that no user pays.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["ONCALL_MEMORY_DATA_DIR"] = str(data)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with subprocess.Popen(
        [sys.executable, "-m", "oncall_memory.cli", *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as child:
        assert child.stdout is not None and child.stderr is not None
        first = child.stdout.read(1)  # the answer's first byte: what a responder starts reading
        SHOWN.append(time.perf_counter() - started if first else math.nan)
        child.stdout.read()
        child.stderr.read()
    elapsed = time.perf_counter() - started
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, argv)
    if reap:
        _reap_orphans()  # a standalone `similar` scans in a child of its own, which leaves just after it
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if sys.platform == "linux":
        _adopt_orphans()
    data = Path(tempfile.mkdtemp())
    first = run(data, "ingest", str(ROOT / "fixtures" / "incidents.jsonl"))
    standalone = [run(data, "similar", "--alert", ALERT) for _ in range(args.runs)]
    standalone_cpu = CPU[-args.runs :]
    standalone_shown = SHOWN[-args.runs :]
    with Serve({"ONCALL_MEMORY_DATA_DIR": str(data)}):
        run(data, "similar", "--alert", ALERT, reap=False)  # the service's first lookup loads its model
        through = [run(data, "similar", "--alert", ALERT, reap=False) for _ in range(args.runs)]
    print(
        f"oncall-memory similar, wall clock, {args.runs} runs each (first ingest, ONNX export included: {first:.1f} s)"
    )
    print(
        f"standalone:           median {statistics.median(standalone):.2f} s  (min {min(standalone):.2f}, max {max(standalone):.2f})"
    )
    print(f"standalone, answer shown: median {statistics.median(standalone_shown):.2f} s (its first byte printed)")
    # Wall clock above CPU means waiting; CPU above wall clock means threads ran side by side. Two cores
    # bound what side by side can save: half the CPU is the floor.
    print(f"standalone CPU:       median {statistics.median(standalone_cpu):.2f} s (user + system, every thread)")
    print(
        f"through the service:  median {statistics.median(through):.2f} s  (min {min(through):.2f}, max {max(through):.2f})"
    )
    print(f"standalone / service: {statistics.median(standalone) / statistics.median(through):.1f}x")


if __name__ == "__main__":
    main()
