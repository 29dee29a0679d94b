"""Jira Service Management as an incident source (`backlog.py`), its rich text read through `adf.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import JiraSettings

if TYPE_CHECKING:
    from .webhook import JiraHook

    webhook: JiraHook
    from ...memory import Memory
    from ...settings import Settings
    from ...sources import Source
    from ...targets import Target


settings_group = JiraSettings  # merged into `Settings` as `settings.jira`


def source(settings: Settings, path: str | None = None) -> Source:
    """The source this integration offers (`ingest --source jira`): the hook every integration offers,
    built-in or installed. Imported when asked for, so finding the integration stays cheap."""
    from .backlog import JiraSource

    return JiraSource.from_settings(settings)


def __getattr__(name: str) -> Any:
    # The webhook is built when the service asks for it: `Settings` reads this package for its settings
    # group, and a command that posts nothing should not import the webhook's models.
    if name == "webhook":
        from .webhook import JiraHook

        globals()["webhook"] = hook = JiraHook()
        return hook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def learners(settings: Settings, memory: Memory) -> list[Target]:
    """The memory learning each closed incident its webhook tells of, read back through the API: the
    `learners` hook. Off until the webhook's secret and the API are both set."""
    from .backlog import JiraAPI
    from .learner import JiraLearner
    from .webhook import learns

    return [JiraLearner(JiraAPI.from_settings(settings), memory)] if learns(settings) else []
