"""Jira Service Management as an incident source (`source.py`), its rich text read through `adf.py`."""
