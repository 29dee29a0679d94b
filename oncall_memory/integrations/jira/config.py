"""Jira's settings group, merged into `Settings` as `settings.jira` by the integrations'
`settings_group` hook (the environment variables keep their names)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class JiraSettings(SettingsGroup):
    """Jira Service Management as a source (ONCALL_MEMORY_JIRA_*): the site, an account's email and API token."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_JIRA_", extra="ignore")

    url: str | None = None  # https://your-site.atlassian.net
    email: str | None = None
    token: SecretStr | None = None
    jql: str | None = None  # which issues are incidents (default: resolved "[System] Incident" work items)
    webhook_secret: SecretStr | None = None  # the admin webhook's secret: /webhooks/jira is off without it
    max_retries: int = 4
    backoff: float = 1.0
