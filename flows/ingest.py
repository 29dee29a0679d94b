"""Scheduled backlog ingest: serve the Prefect flow on a schedule.

    python flows/ingest.py --source jsonl --path fixtures/ --interval 60
    python flows/ingest.py --source pagerduty --cron "*/15 * * * *" --window-days 7

The flow itself lives in `oncall_memory.flow` (the same pipeline as `oncall-memory ingest`); this
script only serves it. Without PREFECT_API_URL it starts a local Prefect server under the data dir.
"""

import argparse
import sys

from oncall_memory.commands import add_schedule_arguments, cmd_schedule
from oncall_memory.flow import ingest_flow  # noqa: F401  (importable for `prefect deploy flows/ingest.py:ingest_flow`)
from oncall_memory.settings import Settings

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_schedule_arguments(parser)
    sys.exit(cmd_schedule(parser.parse_args(), Settings()))
