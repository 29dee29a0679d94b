"""Jira Service Management as an incident source (`backlog.py`), its rich text read through `adf.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import JiraSettings

if TYPE_CHECKING:
    from ...settings import Settings
    from ...sources import Source


settings_group = JiraSettings  # merged into `Settings` as `settings.jira`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source jira`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import JiraSource

    return JiraSource.from_settings(settings)
