"""Rootly: resolved incidents as a source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import RootlySettings

if TYPE_CHECKING:
    from ...settings import Settings
    from ...sources import Source


settings_group = RootlySettings  # merged into `Settings` as `settings.rootly`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source rootly`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import RootlySource

    return RootlySource.from_settings(settings)
