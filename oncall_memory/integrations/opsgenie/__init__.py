"""Opsgenie: its webhook integration (`webhook.py`), offered through the `webhook` hook an installed
integration offers, so the service mounts it as it mounts a plugin's: `POST /webhooks/opsgenie`."""

from __future__ import annotations

from .webhook import OpsgenieHook

webhook = OpsgenieHook()
