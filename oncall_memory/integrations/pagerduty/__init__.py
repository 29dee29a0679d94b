"""PagerDuty, all of it in one place: the REST API v2 client with its limits (`api.py`), PagerDuty as an
incident source (`backlog.py`), its Webhooks v3 (`webhook.py`), the answer as a note (`notes.py`) and the
memory learning as incidents resolve (`learner.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .api import MAX_RANGE, PagerDutyAPI

if TYPE_CHECKING:
    from ...settings import Settings
    from ...sources import Source

__all__ = ["MAX_RANGE", "PagerDutyAPI", "source"]


def source(settings: Settings, path: str | None = None) -> Source:
    """PagerDuty's incidents as a source (`ingest --source pagerduty`): the hook every integration offers."""
    from ...errors import InvalidInput
    from .backlog import PagerDutySource

    if settings.pagerduty.token is None:
        raise InvalidInput("the pagerduty source needs ONCALL_MEMORY_PAGERDUTY_TOKEN (a REST API key)")
    api = PagerDutyAPI.from_settings(settings)
    return PagerDutySource(api, service_ids=settings.pagerduty.service_ids, state_file=settings.dir.pagerduty_open)
