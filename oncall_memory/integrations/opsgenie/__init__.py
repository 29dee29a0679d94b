"""Opsgenie: its webhook integration (`webhook.py`), offered through the `webhook` hook an installed
integration offers, so the service mounts it as it mounts a plugin's: `POST /webhooks/opsgenie`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...plugins import lazy_webhook
from .config import OpsgenieSettings

if TYPE_CHECKING:
    from .webhook import OpsgenieHook

    webhook: OpsgenieHook

settings_group = OpsgenieSettings  # merged into `Settings` as `settings.opsgenie`

__all__ = ["settings_group", "webhook"]


__getattr__ = lazy_webhook(__name__, "OpsgenieHook")
