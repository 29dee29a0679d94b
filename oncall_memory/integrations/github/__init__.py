"""GitHub issues labelled as incidents as an incident source (`source.py`)."""
