"""What every command shares: exit codes and how errors are printed."""

from __future__ import annotations

import sys

EXIT_FAILED, EXIT_USAGE, EXIT_REJECTED = 1, 2, 3


def err(message: str) -> None:
    print(f"oncall-memory: {message}", file=sys.stderr)
