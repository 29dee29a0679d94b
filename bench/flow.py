"""Wall time of the ingest flow over the fixtures, then of a second, unchanged run, with the local model.

    python -m bench.flow

Runs the flow twice in-process on a fresh data dir. Without PREFECT_API_URL Prefect starts a temporary
server first, which this prints separately from the runs; each run's own duration is in Prefect's
log lines ("Beginning flow run" ... "Finished in state Completed()").
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

from oncall_memory.embedders.local import LocalEmbedder  # noqa: E402
from oncall_memory.ingest.flow import ingest_flow  # noqa: E402
from oncall_memory.settings import Settings  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def main() -> None:
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), embedder="local")
    embedder = LocalEmbedder()
    for run in (1, 2):
        started = time.perf_counter()
        counts = ingest_flow("jsonl", str(FIXTURES), None, settings=settings, embedder=embedder)
        print(
            f"run {run}: {time.perf_counter() - started:.2f} s wall (incl. any Prefect start-up) {counts}", flush=True
        )


if __name__ == "__main__":
    main()
