"""A lookup on a collection without a vector index, its original vectors let go of after each read or kept
mapped (issue 54): the same memory, the same alerts, one run, each way in turn.

    python -m bench.perf.originals [--incidents 7000] [--dim 1536] [--alerts 200] [--rounds 3]

Below the index threshold every lookup is an exact search that reads every original vector. Letting go of
their pages after each read (what an indexed collection needs, `pages.AfterEachRead`) then only maps them all
back at the next one. The store keeps them mapped while they are at most `KEEP_MAPPED_BYTES`; this prints the
lookup's p50 and p99 each way, their ratio, and the process's resident memory after each way's lookups.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from synth import varied_rows

from oncall_memory import Memory, Settings
from oncall_memory.domain.alert import Alert
from oncall_memory.domain.incident import Incident
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.store.engines.edge_layout import KEEP_MAPPED_BYTES

from .serve_memory import proc_kb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--incidents", type=int, default=7000)
    ap.add_argument("--dim", type=int, default=1536)
    ap.add_argument("--alerts", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rows = varied_rows(args.incidents + args.alerts)
    incidents = [Incident.model_validate(r) for r in rows[: args.incidents]]
    alerts = [
        Alert(text=f"{r['title']}. {r.get('root_cause') or ''}", env=r.get("env")) for r in rows[args.incidents :]
    ]
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="originals-")), embedder="fake")
    size = args.incidents * args.dim * 4
    print(
        f"{args.incidents} incidents x {args.dim} dims, no vector index: originals {size / 2**20:.0f} MB "
        f"(kept mapped up to {KEEP_MAPPED_BYTES / 2**20:.0f} MB)"
    )
    with Memory.open(settings, embedder=FakeEmbedder(dimension=args.dim)) as memory:
        memory.ingest(incidents)
        store = memory._store
        let_go = store._let_go_originals  # type: ignore[attr-defined]
        ways = {"let go after each read": let_go, "kept mapped": lambda: 0}
        for alert in alerts[:20]:
            memory.similar(alert)  # warm: the page cache, the model of nothing, the code paths
        p50: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.rounds):
            for name, release in ways.items():
                store._read_originals = release  # type: ignore[attr-defined]
                took = []
                for alert in alerts:
                    started = time.perf_counter()
                    memory.similar(alert)
                    took.append((time.perf_counter() - started) * 1000)
                took.sort()
                p50[name].append(statistics.median(took))
                rss = proc_kb(os.getpid(), "VmRSS") / 1024
                print(
                    f"  {name:24} p50 {statistics.median(took):6.2f} ms  p99 {took[int(len(took) * 0.99)]:6.2f} ms"
                    f"  resident {rss:6.0f} MB"
                )
    a, b = (statistics.median(p50[n]) for n in ways)
    print(f"median p50: {a:.2f} ms let go, {b:.2f} ms kept: {a / b:.2f}x")


if __name__ == "__main__":
    main()
