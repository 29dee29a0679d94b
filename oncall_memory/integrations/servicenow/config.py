"""ServiceNow's settings group, merged into `Settings` as `settings.servicenow` by the integrations'
`settings_group` hook (the environment variables keep their names)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class ServiceNowSettings(SettingsGroup):
    """ServiceNow's incident table as a source (ONCALL_MEMORY_SERVICENOW_*), with basic auth."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_SERVICENOW_", extra="ignore")

    url: str | None = None  # https://your-instance.service-now.com
    user: str | None = None
    password: SecretStr | None = None
    query: str | None = None  # an encoded query added to the default (resolved or closed incidents)
    max_retries: int = 4
    backoff: float = 1.0
