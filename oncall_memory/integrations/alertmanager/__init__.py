"""Alertmanager: its webhook (`webhook.py`), offered through the `webhook` hook an installed integration
offers, so the service mounts it as it mounts a plugin's: `POST /webhooks/alertmanager`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...plugins import lazy_webhook
from .config import AlertmanagerSettings

if TYPE_CHECKING:
    from .webhook import AlertmanagerHook

    webhook: AlertmanagerHook

settings_group = AlertmanagerSettings  # merged into `Settings` as `settings.alertmanager`

__all__ = ["settings_group", "webhook"]


__getattr__ = lazy_webhook(__name__, "AlertmanagerHook")
