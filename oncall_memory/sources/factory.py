"""Build the source a setting or a command names."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidInput
from ..pagerduty import PagerDutyAPI
from ..settings import Settings
from . import Source
from .jsonl import JsonlSource
from .pagerduty import PagerDutySource


def pagerduty_api(settings: Settings, *, with_from: bool = False) -> PagerDutyAPI:
    """The PagerDuty client the settings describe (`with_from`: the From: header notes need)."""
    if settings.pagerduty_token is None:
        raise InvalidInput("PagerDuty needs ONCALL_MEMORY_PAGERDUTY_TOKEN (a REST API key)")
    return PagerDutyAPI(
        settings.pagerduty_token,
        base_url=settings.pagerduty_url,
        from_email=settings.pagerduty_from_email if with_from else None,
        per_minute=settings.pagerduty_requests_per_minute,
        max_retries=settings.pagerduty_max_retries,
        backoff=settings.pagerduty_backoff,
        max_wait=settings.retry_after_cap,
        timeout=settings.post_timeout if with_from else 30.0,
    )


def make_source(settings: Settings, source: str, path: str | None, *, follow_open: bool = True) -> Source:
    """The source `source` names. `follow_open`: a PagerDuty source remembers incidents seen open and
    looks at them again on later runs (what a schedule wants, not a one-shot backfill)."""
    if source == "jsonl":
        if not path:
            raise InvalidInput("the jsonl source needs --path (a JSONL file or a folder of them)")
        return JsonlSource(Path(path))
    if source == "pagerduty":
        if settings.pagerduty_token is None:
            raise InvalidInput("the pagerduty source needs ONCALL_MEMORY_PAGERDUTY_TOKEN (a REST API key)")
        state = settings.dir.pagerduty_open if follow_open else None
        return PagerDutySource(pagerduty_api(settings), service_ids=settings.pagerduty_service_ids, state_file=state)
    raise InvalidInput(f"unknown source {source!r}: use jsonl or pagerduty")
