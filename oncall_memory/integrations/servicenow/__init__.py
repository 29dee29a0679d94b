"""ServiceNow's incident table as an incident source (`backlog.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import ServiceNowSettings

if TYPE_CHECKING:
    from ...settings import Settings
    from ...sources import Source


settings_group = ServiceNowSettings  # merged into `Settings` as `settings.servicenow`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source servicenow`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import ServiceNowSource

    return ServiceNowSource.from_settings(settings)
