"""Build the source a setting or a command names."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidInput
from ..pagerduty import PagerDutyAPI
from ..pagerduty.source import PagerDutySource
from ..settings import Settings
from . import Source
from .jsonl import JsonlSource


def make_source(settings: Settings, source: str, path: str | None, *, follow_open: bool = True) -> Source:
    """The source `source` names. `follow_open`: a PagerDuty source remembers incidents seen open and
    looks at them again on later runs (what a schedule wants, not a one-shot backfill)."""
    if source == "jsonl":
        if not path:
            raise InvalidInput("the jsonl source needs --path (a JSONL file or a folder of them)")
        return JsonlSource(Path(path))
    if source == "pagerduty":
        if settings.pagerduty.token is None:
            raise InvalidInput("the pagerduty source needs ONCALL_MEMORY_PAGERDUTY_TOKEN (a REST API key)")
        state = settings.dir.pagerduty_open if follow_open else None
        return PagerDutySource(
            PagerDutyAPI.from_settings(settings), service_ids=settings.pagerduty.service_ids, state_file=state
        )
    raise InvalidInput(f"unknown source {source!r}: use jsonl or pagerduty")
