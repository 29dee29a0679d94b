"""PagerDuty's settings group, merged into `Settings` as `settings.pagerduty` by the integrations'
`settings_group` hook (the environment variables keep their names)."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class PagerDutySettings(SettingsGroup):
    """PagerDuty: the REST API (a source, notes, learning) and its v3 webhooks (ONCALL_MEMORY_PAGERDUTY_*)."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_PAGERDUTY_", extra="ignore")

    url: str = "https://api.pagerduty.com"
    token: SecretStr | None = None
    service_ids: list[str] = []
    max_retries: int = 4  # 429 (after ratelimit-reset), 5xx and network errors, per read
    backoff: float = 1.0  # seconds, doubled per retry when PagerDuty gives no wait
    requests_per_minute: float = Field(default=900, gt=0, le=960)  # per API key, source and notes together
    refresh_days: float = 30.0  # a scheduled run re-reads incidents this recent, so late notes arrive
    webhook_secret: SecretStr | None = None  # PagerDuty v3 subscription secret; unsigned requests get 401
    from_email: str | None = None  # the From: header PagerDuty requires on notes
