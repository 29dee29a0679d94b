"""GitLab: incident issues (and issues labelled as incidents) as a source."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import GitLabSettings

if TYPE_CHECKING:
    from .webhook import GitLabHook

    webhook: GitLabHook
    from ...settings import Settings
    from ...sources import Source


settings_group = GitLabSettings  # merged into `Settings` as `settings.gitlab`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source gitlab`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import GitLabSource

    return GitLabSource.from_settings(settings)


def __getattr__(name: str) -> Any:
    # The webhook is built when the service asks for it: `Settings` reads this package for its settings
    # group, and a command that posts nothing should not import the webhook's models.
    if name == "webhook":
        from .webhook import GitLabHook

        globals()["webhook"] = hook = GitLabHook()
        return hook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
