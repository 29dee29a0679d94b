"""GitLab's settings group, merged into `Settings` as `settings.gitlab` by the integrations'
`settings_group` hook (the environment variables keep their names)."""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from ...settings import SettingsGroup


class GitLabSettings(SettingsGroup):
    """GitLab incidents as a source (ONCALL_MEMORY_GITLAB_*): issues of type incident, or with labels."""

    model_config = SettingsConfigDict(env_prefix="ONCALL_MEMORY_GITLAB_", extra="ignore")

    project: str | None = None  # the numeric id, or the path: group/subgroup/project
    issue_type: str = "incident"  # GitLab's incident issues; blank: issues of any type
    labels: str = ""  # comma-separated: issues carrying all of them (none asked by default)
    token: SecretStr | None = None  # a personal, group or project access token with read_api
    url: str = "https://gitlab.com/api/v4"  # self-managed: https://HOST/api/v4
    webhook_secret: SecretStr | None = None  # the webhook's secret token: learn incidents as they close
    max_retries: int = 4
    backoff: float = 1.0
