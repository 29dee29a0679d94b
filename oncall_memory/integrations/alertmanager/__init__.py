"""Alertmanager: its webhook (`webhook.py`), offered through the `webhook` hook an installed integration
offers, so the service mounts it as it mounts a plugin's: `POST /webhooks/alertmanager`."""

from __future__ import annotations

from .webhook import AlertmanagerHook

webhook = AlertmanagerHook()
