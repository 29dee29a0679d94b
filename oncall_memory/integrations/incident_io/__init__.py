"""incident.io as an incident source (`source.py`)."""
