"""Jira Service Management as an incident source (`backlog.py`), its rich text read through `adf.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...plugins import lazy_webhook
from .config import JiraSettings

if TYPE_CHECKING:
    from ...memory import Memory
    from ...settings import Settings
    from ...sources import Source
    from ...targets import Target
    from .webhook import JiraHook

    webhook: JiraHook

settings_group = JiraSettings  # merged into `Settings` as `settings.jira`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source jira`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import JiraSource

    return JiraSource.from_settings(settings)


__getattr__ = lazy_webhook(__name__, "JiraHook")


def learners(settings: Settings, memory: Memory) -> list[Target]:
    """The memory learning each closed incident its webhook tells of, read back through the API: the
    `learners` hook. Off until the webhook's secret and the API are both set."""
    from .backlog import JiraAPI
    from .learner import JiraLearner
    from .webhook import learns

    return [JiraLearner(JiraAPI.from_settings(settings), memory)] if learns(settings) else []
