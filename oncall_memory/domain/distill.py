"""Distill an incident to the text that gets embedded: four signal lines, no noise."""

from __future__ import annotations

import hashlib

from .incident import Incident
from .noise import strip_ceremony, strip_links, strip_noise

# The fields whose words carry the meaning of an incident, in the order they are glued.
SIGNAL_FIELDS = ("title", "root_cause", "error_signature", "oncall_note")


def distill(incident: Incident) -> str:
    """The embedded text: title, root cause, error signature and on-call note, one per line.

    Blank lines are skipped; noise is stripped from each line. (Secrets are gone already: an
    `Incident` is redacted as it is built.)
    """
    lines = []
    for field in SIGNAL_FIELDS:
        value = getattr(incident, field)
        if value:
            line = strip_noise(strip_ceremony(value))
            if line:
                lines.append(line)
    return "\n".join(lines)


def distill_alert(text: str) -> str:
    """An alert goes through the same cleaning as an incident, so both land in the same space; and its links
    go (a pager's silence and dashboard links are no words of the problem)."""
    return strip_noise(strip_links(strip_ceremony(text)))


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
