"""Slack: the answer as a message (`targets.py`, `render.py`) and the Slack app (`app.py`: a slash command and
feedback buttons), offered through the hooks every integration uses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import SlackSettings

if TYPE_CHECKING:
    from ...settings import Settings
    from ...targets import Target

settings_group = SlackSettings  # merged into `Settings` as `settings.slack`
# What to set for its target, said when answers would go nowhere.
targets_need = "ONCALL_MEMORY_SLACK_WEBHOOK_URL, or ONCALL_MEMORY_SLACK_BOT_TOKEN and ONCALL_MEMORY_SLACK_CHANNEL (a Slack message)"

__all__ = ["chat_app", "settings_group", "targets", "targets_need"]


def _targets(settings: Settings) -> list[Target]:
    """Slack's target without the app's buttons: the `targets` hook (the app, when on, gives its own)."""
    from .targets import make_targets

    return make_targets(settings)


def __getattr__(name: str) -> Any:
    # Given when asked for: `Settings` reads this package for its settings group, and a command that posts
    # nothing should not import httpx and FastAPI for it. (`targets` is also this package's submodule: once
    # that is imported it stands in the attribute, and the hook is found through here; see `integrations._hook`.)
    if name == "targets":
        return _targets
    if name == "chat_app":
        from .app import SlackApp

        return SlackApp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
