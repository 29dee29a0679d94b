"""Opsgenie: its webhook integration (`webhook.py`)."""
