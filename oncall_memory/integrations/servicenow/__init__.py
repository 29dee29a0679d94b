"""ServiceNow's incident table as an incident source (`source.py`)."""
