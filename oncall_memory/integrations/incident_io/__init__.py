"""incident.io as an incident source (`backlog.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import IncidentIoSettings

if TYPE_CHECKING:
    from ...settings import Settings
    from ...sources import Source


settings_group = IncidentIoSettings  # merged into `Settings` as `settings.incident_io`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source incident_io`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import IncidentIoSource

    return IncidentIoSource.from_settings(settings)
