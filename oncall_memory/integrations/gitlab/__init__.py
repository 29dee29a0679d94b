"""GitLab: incident issues (and issues labelled as incidents) as a source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...plugins import lazy_webhook
from .config import GitLabSettings

if TYPE_CHECKING:
    from ...memory import Memory
    from ...settings import Settings
    from ...sources import Source
    from ...targets import Target
    from .webhook import GitLabHook

    webhook: GitLabHook

settings_group = GitLabSettings  # merged into `Settings` as `settings.gitlab`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source gitlab`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import GitLabSource

    return GitLabSource.from_settings(settings)


__getattr__ = lazy_webhook(__name__, "GitLabHook")


def learners(settings: Settings, memory: Memory) -> list[Target]:
    """The memory learning each closed incident its webhook tells of, read back through the API: the
    `learners` hook. Off until the webhook's secret and the API are both set."""
    from .learner import GitLabLearner
    from .webhook import learns

    return [GitLabLearner.from_settings(settings, memory)] if learns(settings) else []
