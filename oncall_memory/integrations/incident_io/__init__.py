"""incident.io as an incident source (`backlog.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...plugins import lazy_webhook
from .config import IncidentIoSettings

if TYPE_CHECKING:
    from ...memory import Memory
    from ...settings import Settings
    from ...sources import Source
    from ...targets import Target
    from .webhook import IncidentIoHook

    webhook: IncidentIoHook

settings_group = IncidentIoSettings  # merged into `Settings` as `settings.incident_io`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source incident_io`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import IncidentIoSource

    return IncidentIoSource.from_settings(settings)


__getattr__ = lazy_webhook(__name__, "IncidentIoHook")


def learners(settings: Settings, memory: Memory) -> list[Target]:
    """The memory learning each closed incident its webhook tells of, read back through the API: the
    `learners` hook. Off until the webhook's secret and the API are both set."""
    from .backlog import IncidentIoSource
    from .learner import IncidentIoLearner
    from .webhook import learns

    return [IncidentIoLearner(IncidentIoSource.api_from(settings), memory)] if learns(settings) else []
