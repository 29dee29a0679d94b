"""PagerDuty, all of it in one place: the REST API v2 client with its limits (`api.py`), PagerDuty as an
incident source (`backlog.py`), its Webhooks v3 (`webhook.py`), the answer as a note (`notes.py`) and the
memory learning as incidents resolve (`learner.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...plugins import lazy_webhook
from .config import PagerDutySettings

if TYPE_CHECKING:
    from ...jobs import Refiner
    from ...live import LiveIncidents
    from ...memory import Memory
    from ...settings import Settings
    from ...sources import Source
    from ...targets import Target
    from .api import MAX_RANGE, PagerDutyAPI
    from .webhook import PagerDutyHook

    webhook: PagerDutyHook

settings_group = PagerDutySettings  # merged into `Settings` as `settings.pagerduty`
# What to set for its target, said when answers would go nowhere.
targets_need = "ONCALL_MEMORY_PAGERDUTY_TOKEN and ONCALL_MEMORY_PAGERDUTY_FROM_EMAIL (a note on the PagerDuty incident)"

__all__ = [
    "MAX_RANGE",
    "PagerDutyAPI",
    "learners",
    "live_incidents",
    "refiners",
    "settings_group",
    "source",
    "targets",
    "targets_need",
    "webhook",
]


_webhook = lazy_webhook(__name__, "PagerDutyHook")


def __getattr__(name: str) -> Any:
    # The API client (and httpx under it) is imported when used: `Settings` reads this package for its
    # settings group, and a lookup that posts nothing should not pay for it.
    if name in ("MAX_RANGE", "PagerDutyAPI"):
        from . import api

        return getattr(api, name)
    return _webhook(name)  # built when the service asks for it, as the API client is


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


def targets(settings: Settings) -> list[Target]:
    """PagerDuty notes on the incident an answer is about: the `targets` hook. Needs a REST API key and the
    From: address PagerDuty requires on notes."""
    from .api import PagerDutyAPI
    from .notes import PagerDutyNotes

    if not (settings.pagerduty.token and settings.pagerduty.from_email):
        return []
    return [PagerDutyNotes(PagerDutyAPI.from_settings(settings, with_from=True), sender=settings.pagerduty.from_email)]


def live_incidents(settings: Settings) -> LiveIncidents | None:
    """PagerDuty's incidents for an agent to read and post a finding on: the `live_incidents` hook. Needs a
    REST API key and the From: address PagerDuty requires on notes."""
    from .api import PagerDutyAPI
    from .live import PagerDutyIncidents

    if not (settings.pagerduty.token and settings.pagerduty.from_email):
        return None
    return PagerDutyIncidents(PagerDutyAPI.from_settings(settings, with_from=True))


def refiners(settings: Settings) -> list[Refiner]:
    """A triggered incident's custom details, read from its first alert before it is looked up: the
    `refiners` hook (Webhooks v3 leave them out). Needs a REST API key."""
    from .details import CustomDetails

    return [CustomDetails.from_settings(settings)] if settings.pagerduty.token else []


def learners(settings: Settings, memory: Memory) -> list[Target]:
    """The memory learning resolved and annotated incidents as PagerDuty's webhook tells of them: the
    `learners` hook. Reading an incident back needs the REST API."""
    from .api import PagerDutyAPI
    from .learner import Learner

    return [Learner(PagerDutyAPI.from_settings(settings), memory)] if settings.pagerduty.token else []
