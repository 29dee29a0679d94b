"""Rootly: resolved incidents as a source."""
