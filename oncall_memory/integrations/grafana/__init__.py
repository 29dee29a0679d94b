"""Grafana Alerting: its webhook contact point (`webhook.py`), offered through the `webhook` hook an
installed integration offers, so the service mounts it as it mounts a plugin's: `POST /webhooks/grafana`."""

from __future__ import annotations

from .webhook import GrafanaHook

webhook = GrafanaHook()
