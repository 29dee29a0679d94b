"""Build the source a setting or a command names."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidInput
from ..settings import Settings
from . import Source
from .jsonl import JsonlSource
from .pagerduty import PagerDutySource


def make_source(settings: Settings, source: str, path: str | None) -> Source:
    if source == "jsonl":
        if not path:
            raise InvalidInput("the jsonl source needs --path (a JSONL file or a folder of them)")
        return JsonlSource(Path(path))
    if source == "pagerduty":
        if settings.pagerduty_token is None:
            raise InvalidInput("the pagerduty source needs ONCALL_MEMORY_PAGERDUTY_TOKEN (a REST API key)")
        return PagerDutySource(
            settings.pagerduty_token,
            base_url=settings.pagerduty_url,
            service_ids=settings.pagerduty_service_ids,
            max_retries=settings.pagerduty_max_retries,
            backoff=settings.pagerduty_backoff,
        )
    raise InvalidInput(f"unknown source {source!r}: use jsonl or pagerduty")
