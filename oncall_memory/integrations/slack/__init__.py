"""Slack: the answer as a message (`targets.py`) and the Slack app (`app.py`: a slash command and feedback buttons)."""

from __future__ import annotations

from .config import SlackSettings

settings_group = SlackSettings  # merged into `Settings` as `settings.slack`
# What to set for its target, said when answers would go nowhere.
targets_need = "ONCALL_MEMORY_SLACK_WEBHOOK_URL, or ONCALL_MEMORY_SLACK_BOT_TOKEN and ONCALL_MEMORY_SLACK_CHANNEL (a Slack message)"

__all__ = ["settings_group", "targets_need"]
