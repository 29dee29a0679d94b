"""Slack: the answer as a message (`targets.py`) and the Slack app (`app.py`: a slash command and feedback buttons)."""

from __future__ import annotations

from .config import SlackSettings

settings_group = SlackSettings  # merged into `Settings` as `settings.slack`

__all__ = ["settings_group"]
