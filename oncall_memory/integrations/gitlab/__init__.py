"""GitLab: incident issues (and issues labelled as incidents) as a source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import GitLabSettings

if TYPE_CHECKING:
    from ...settings import Settings
    from ...sources import Source


settings_group = GitLabSettings  # merged into `Settings` as `settings.gitlab`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source gitlab`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import GitLabSource

    return GitLabSource.from_settings(settings)
