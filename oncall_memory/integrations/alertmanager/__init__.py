"""Alertmanager: its webhook (`webhook.py`)."""
