"""PagerDuty, all of it in one place: the REST API v2 client with its limits (`api.py`), PagerDuty as an
incident source (`backlog.py`), its Webhooks v3 (`webhook.py`), the answer as a note (`notes.py`) and the
memory learning as incidents resolve (`learner.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import PagerDutySettings

if TYPE_CHECKING:
    from ...settings import Settings
    from ...sources import Source
    from .api import MAX_RANGE, PagerDutyAPI
    from .webhook import PagerDutyHook

    webhook: PagerDutyHook

settings_group = PagerDutySettings  # merged into `Settings` as `settings.pagerduty`

__all__ = ["MAX_RANGE", "PagerDutyAPI", "settings_group", "source", "webhook"]


def __getattr__(name: str) -> Any:
    # The API client (and httpx under it) is imported when used: `Settings` reads this package for its
    # settings group, and a lookup that posts nothing should not pay for it.
    if name in ("MAX_RANGE", "PagerDutyAPI"):
        from . import api

        return getattr(api, name)
    if name == "webhook":  # built when the service asks for it, as the API client is
        from .webhook import PagerDutyHook

        globals()["webhook"] = hook = PagerDutyHook()
        return hook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def source(settings: Settings, path: str | None = None) -> Source:
    """PagerDuty's incidents as a source (`ingest --source pagerduty`): the hook every integration offers."""
    from ...errors import InvalidInput
    from .api import PagerDutyAPI
    from .backlog import PagerDutySource

    if settings.pagerduty.token is None:
        raise InvalidInput("the pagerduty source needs ONCALL_MEMORY_PAGERDUTY_TOKEN (a REST API key)")
    api = PagerDutyAPI.from_settings(settings)
    return PagerDutySource(
        api, service_ids=settings.pagerduty.service_ids, state_file=settings.dir.followed_open("pagerduty")
    )
