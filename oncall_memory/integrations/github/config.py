"""GitHub's settings group, merged into `Settings` as `settings.github` by the integrations'
`settings_group` hook (the environment variables keep their names)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class GitHubSettings(SettingsGroup):
    """GitHub issues labelled as incidents as a source (ONCALL_MEMORY_GITHUB_*)."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_GITHUB_", extra="ignore")

    repo: str | None = None  # owner/name
    labels: str = "incident"  # comma-separated: issues carrying all of them
    token: SecretStr | None = None  # a fine-grained token with Issues: read (public repos work without)
    url: str = "https://api.github.com"  # GitHub Enterprise Server: https://HOST/api/v3
    max_retries: int = 4
    backoff: float = 1.0
