"""Rootly's settings group, merged into `Settings` as `settings.rootly` by the integrations'
`settings_group` hook (the environment variables keep their names)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class RootlySettings(SettingsGroup):
    """Rootly as a source (ONCALL_MEMORY_ROOTLY_*): an API key that can read incidents."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_ROOTLY_", extra="ignore")

    token: SecretStr | None = None
    url: str = "https://api.rootly.com"
    max_retries: int = 4
    backoff: float = 1.0
