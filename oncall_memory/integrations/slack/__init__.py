"""Slack: the answer as a message (`targets.py`) and the Slack app (`app.py`: a slash command and feedback buttons)."""
