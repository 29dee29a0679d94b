"""Opsgenie's settings group, merged into `Settings` as `settings.opsgenie` by the integrations' `settings_group` hook
(the environment variables keep their names)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class OpsgenieSettings(SettingsGroup):
    """Opsgenie's webhook (ONCALL_MEMORY_OPSGENIE_*)."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_OPSGENIE_", extra="ignore")

    token: SecretStr | None = None  # the shared secret Opsgenie must send (a custom header, bearer or basic auth)
