"""Grafana Alerting's settings group, merged into `Settings` as `settings.grafana` by the integrations'
`settings_group` hook, as an installed integration's would be (the environment variable keeps its name)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class GrafanaSettings(SettingsGroup):
    """Grafana Alerting's webhook contact point (ONCALL_MEMORY_GRAFANA_*)."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_GRAFANA_", extra="ignore")

    # The contact point's Authorization credentials (`Bearer <secret>`), or its HMAC signature's secret.
    secret: SecretStr | None = None
