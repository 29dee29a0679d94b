"""Sub-commands beyond the core (eval, schedule, ...), registered here to keep cli.py small."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the extra sub-commands to the `oncall-memory` parser."""
