"""Grafana Alerting: its webhook contact point (`webhook.py`), offered through the `webhook` hook an
installed integration offers, so the service mounts it as it mounts a plugin's: `POST /webhooks/grafana`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...plugins import lazy_webhook
from .config import GrafanaSettings

if TYPE_CHECKING:
    from .webhook import GrafanaHook

    webhook: GrafanaHook

settings_group = GrafanaSettings  # merged into `Settings` as `settings.grafana`

__all__ = ["settings_group", "webhook"]


__getattr__ = lazy_webhook(__name__, "GrafanaHook")
