"""GitHub issues labelled as incidents as an incident source (`backlog.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import GitHubSettings

if TYPE_CHECKING:
    from ...settings import Settings
    from ...sources import Source


settings_group = GitHubSettings  # merged into `Settings` as `settings.github`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source github`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import GitHubSource

    return GitHubSource.from_settings(settings)
