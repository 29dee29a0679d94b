"""Scheduled backlog ingest: serve the Prefect flow on a schedule.

    python flows/ingest.py --source jsonl --path fixtures/ --interval 60
    python flows/ingest.py --source pagerduty --cron "*/15 * * * *" --window-days 7

The flow itself lives in `oncall_memory.orchestration.flow` (the same pipeline as `oncall-memory ingest`); this
script only serves it. Without PREFECT_API_URL it starts a local Prefect server under the data dir.
"""

import sys

from oncall_memory.orchestration.flow import ingest_flow  # noqa: F401  (importable for `prefect deploy flows/ingest.py:ingest_flow`)
from oncall_memory.orchestration.schedule import main

if __name__ == "__main__":
    sys.exit(main())
