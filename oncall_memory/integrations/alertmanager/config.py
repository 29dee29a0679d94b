"""Alertmanager's settings group, merged into `Settings` as `settings.alertmanager` by the integrations' `settings_group` hook
(the environment variables keep their names)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class AlertmanagerSettings(SettingsGroup):
    """Alertmanager's webhook (ONCALL_MEMORY_ALERTMANAGER_*)."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_ALERTMANAGER_", extra="ignore")

    token: SecretStr | None = None  # the bearer token Alertmanager must send (its receiver's http_config.authorization)
