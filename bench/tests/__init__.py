"""The lab's own tests: its scoring, its sets' labels, its readers of /proc; and that every module imports."""
