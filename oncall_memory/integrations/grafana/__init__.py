"""Grafana Alerting: its webhook contact point (`webhook.py`), offered through the `webhook` hook an
installed integration offers, so the service mounts it as it mounts a plugin's: `POST /webhooks/grafana`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import GrafanaSettings

if TYPE_CHECKING:
    from .webhook import GrafanaHook

    webhook: GrafanaHook

settings_group = GrafanaSettings  # merged into `Settings` as `settings.grafana`

__all__ = ["settings_group", "webhook"]


def __getattr__(name: str) -> Any:
    # The webhook is built when the service asks for it: `Settings` reads this package for its settings
    # group, and a command that posts nothing should not import the webhook's models.
    if name == "webhook":
        from .webhook import GrafanaHook

        globals()["webhook"] = hook = GrafanaHook()
        return hook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
