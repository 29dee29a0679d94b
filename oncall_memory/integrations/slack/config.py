"""Slack's settings group, merged into `Settings` as `settings.slack` by the integrations'
`settings_group` hook (the environment variables keep their names)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class SlackSettings(SettingsGroup):
    """Slack (ONCALL_MEMORY_SLACK_*): an incoming webhook, or the Slack app (slack-app-manifest.yml): its
    routes verify Slack's signature with the signing secret; with a bot token and a channel, webhook answers
    are posted by the app (chat.postMessage, with feedback buttons) instead of the incoming webhook."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_SLACK_", extra="ignore")

    webhook_url: SecretStr | None = None  # an incoming-webhook URL is itself a secret
    signing_secret: SecretStr | None = None
    bot_token: SecretStr | None = None
    channel: str | None = None  # a channel id (C0123...) or name the app is in
    api_url: str = "https://slack.com/api"
