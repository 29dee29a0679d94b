"""incident.io's settings group, merged into `Settings` as `settings.incident_io` by the integrations'
`settings_group` hook (the environment variables keep their names)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class IncidentIoSettings(SettingsGroup):
    """incident.io as a source (ONCALL_MEMORY_INCIDENT_IO_*): an API key that can view incidents."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_INCIDENT_IO_", extra="ignore")

    token: SecretStr | None = None
    url: str = "https://api.incident.io"
    webhook_secret: SecretStr | None = None  # the webhook endpoint's signing secret (whsec_...): learn as they close
    max_retries: int = 4
    backoff: float = 1.0
