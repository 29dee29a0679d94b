"""What secret detection costs: the same backlog ingested with and without redaction, one run.

    python -m bench.redaction [--incidents 10000] [--secret-share 0.02]

Rows are the JSONL reader's dicts (redaction runs as each `Incident` is built); a share of them carry a
pasted credential so the detectors' slow path is exercised, the rest are the pre-check's fast path.
Timed: building the incidents, and the whole ingest (build, distill, fake embedding, Edge write).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from unittest import mock

from oncall_memory import facts
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.incident import Incident
from oncall_memory.memory import Memory
from oncall_memory.redact import redact_all
from oncall_memory.settings import Settings

from .synth import synthetic_rows

PASTED = [
    "psql said password authentication failed; PGPASSWORD=Hx7uQ2mZp9LrT4vW was in the runbook",
    "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvbmNhbGwifQ.c2lnbmF0dXJlLWhlcmUtMTIz' worked",
    "the deploy key ghp_Zx8YwVu7TsRq6PoNm5LkJi4HgFe3DcBa2Q1w was rotated",
    "dd-agent: API Key invalid 3f8a9b2c4d5e6f708192a3b4c5d6e7f8",
]


def rows_with_secrets(n: int, share: float) -> list[dict]:
    rng = random.Random(3)
    rows = synthetic_rows(n)
    for row in rng.sample(rows, int(n * share)):
        row["oncall_note"] = f"{row.get('oncall_note', '')} {rng.choice(PASTED)}"
    return rows


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def ingest(rows: list[dict], dim: int) -> None:
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder(dim)) as memory:
        memory.ingest(Incident.model_validate(r) for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=10_000)
    ap.add_argument("--secret-share", type=float, default=0.02)
    ap.add_argument("--dim", type=int, default=1536)
    args = ap.parse_args()
    rows = rows_with_secrets(args.incidents, args.secret_share)
    redact_all(rows[0])  # load detect-secrets' detectors outside the timing

    build = lambda: [Incident.model_validate(r) for r in rows]  # noqa: E731
    with mock.patch.object(facts, "holds_secret", lambda data: False):
        build_off, ingest_off = timed(build), timed(lambda: ingest(rows, args.dim))
    build_on, ingest_on = timed(build), timed(lambda: ingest(rows, args.dim))
    n = args.incidents
    print(f"{n} incidents ({args.secret_share:.0%} with a pasted credential), fake embedder {args.dim} dims, Edge")
    print(f"build the incidents: without redaction {build_off:6.2f} s | with {build_on:6.2f} s | "
          f"{build_on / build_off:.2f}x  ({(build_on - build_off) / n * 1e6:.0f} µs an incident)")
    print(f"whole ingest:        without redaction {ingest_off:6.2f} s | with {ingest_on:6.2f} s | "
          f"{ingest_on / ingest_off:.2f}x")


if __name__ == "__main__":
    main()
