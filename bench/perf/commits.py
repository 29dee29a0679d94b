"""The same lookups through `oncall-memory serve`, at several commits, for finding where time went.

    python -m bench.perf.commits REF [REF ...] [--incidents 30000] [--queries 100] [--passes 3]

For each commit: a git worktree of it, a store built by that commit's own `oncall-memory ingest` from one
JSONL backlog (the varied synthetic backlog, written once by this checkout; fake embedder, 1536 dims, the
index built when that commit's ingest builds it), then `oncall-memory serve` on it and `GET /similar` for
`--queries` distinct alert texts, one at a time from one client, `--passes` times. Every commit runs with
its own virtualenv (`pip install` of that commit's package and dependencies, from pip's cache where it
can). Prints client-seen p50/p99 per commit and the
ratio to the first. Commits are measured in turn, not interleaved: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from synth import sample_alerts, varied_rows

from oncall_memory.orchestration.schedule import free_port

from .scale import pct

ROOT = Path(__file__).resolve().parents[2]


def texts(n: int) -> list[str]:
    """`n` distinct alert texts: the sample alerts, each with a different trailing detail."""
    base = [a["text"] for a in sample_alerts()]
    return [f"{base[i % len(base)]} (host {i})" for i in range(n)]


def measure(ref: str, backlog: Path, queries: list[str], passes: int, work: Path) -> dict:
    tree = work / f"tree-{ref.replace('/', '_')}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), ref], check=True)
    data = work / f"data-{ref.replace('/', '_')}"
    venv = work / f"venv-{ref.replace('/', '_')}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "-e", str(tree)], check=True)
    env = {
        **os.environ,
        "ONCALL_MEMORY_DATA_DIR": str(data),
        "ONCALL_MEMORY_EMBEDDER": "fake",
        "ONCALL_MEMORY_EMBED_DIM": "1536",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        started = time.perf_counter()
        subprocess.run(
            [python, "-m", "oncall_memory.cli", "ingest", str(backlog)],
            env=env,
            check=True,
            cwd=tree,
            stdout=subprocess.DEVNULL,
        )
        built = time.perf_counter() - started
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen(
            [python, "-m", "oncall_memory.cli", "serve", "--port", str(port)],
            env=env,
            cwd=tree,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with httpx.Client(base_url=url, timeout=60) as client:
                while True:
                    try:
                        if client.get("/readyz").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if proc.poll() is not None:
                        raise SystemExit(f"{ref}: serve exited during start-up")
                    time.sleep(0.2)
                for text in queries[:10]:  # the first lookups pay one-time costs
                    client.get("/similar", params={"text": text + " warm-up"})
                latencies: list[float] = []
                for _ in range(passes):
                    for text in queries:
                        t = time.perf_counter()
                        response = client.get("/similar", params={"text": text})
                        latencies.append((time.perf_counter() - t) * 1000)
                        response.raise_for_status()
        finally:
            proc.terminate()
            proc.wait(60)
        commit = subprocess.run(
            ["git", "-C", str(tree), "log", "-1", "--format=%h %s"], capture_output=True, text=True, check=True
        ).stdout.strip()
        return {
            "ref": ref,
            "commit": commit,
            "built_s": built,
            "p50": statistics.median(latencies),
            "p99": pct(latencies, 0.99),
        }
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("refs", nargs="+")
    ap.add_argument("--incidents", type=int, default=30_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-commits-"))
    backlog = work / "backlog.jsonl"
    with backlog.open("w") as out:
        for row in varied_rows(args.incidents):
            out.write(json.dumps(row) + "\n")
    queries = texts(args.queries)
    print(
        f"GET /similar through `oncall-memory serve`, {args.incidents} incidents (fake embedder, 1536 dims), "
        f"{args.queries} distinct texts x {args.passes}, one client"
    )
    first = None
    for ref in args.refs:
        row = measure(ref, backlog, queries, args.passes, work)
        first = first or row
        print(
            f"{row['commit'][:60]:<60}  p50 {row['p50']:6.2f} ms  p99 {row['p99']:6.2f} ms  "
            f"({row['p50'] / first['p50']:.2f}x the first; store built in {row['built_s']:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
