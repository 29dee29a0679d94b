"""Distill an incident to the text that gets embedded: four signal lines, no noise, no secrets."""

from __future__ import annotations

import hashlib
from typing import Any

from .incident import Incident
from .noise import strip_noise
from .redact import redact

# The fields whose words carry the meaning of an incident, in the order they are glued.
SIGNAL_FIELDS = ("title", "root_cause", "error_signature", "oncall_note")


def redact_incident(incident: Incident) -> Incident:
    """Return a copy of `incident` with secrets redacted from every text field, fixes included."""

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items()}
        return value

    return Incident.model_validate(scrub(incident.model_dump(mode="json")))


def distill(incident: Incident) -> str:
    """The embedded text: title, root cause, error signature and on-call note, one per line.

    Blank lines are skipped; secrets are redacted and noise is stripped from each line.
    """
    lines = []
    for field in SIGNAL_FIELDS:
        value = getattr(incident, field)
        if value:
            line = strip_noise(redact(value))
            if line:
                lines.append(line)
    return "\n".join(lines)


def distill_alert(text: str) -> str:
    """An alert goes through the same cleaning as an incident, so both land in the same space."""
    return strip_noise(redact(text))


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
