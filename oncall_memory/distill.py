"""Distill an incident to the text that gets embedded: four signal lines, no noise, no secrets."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from .incident import Incident
from .noise import strip_noise
from .redact import might_hold_secret, redact

# The fields whose words carry the meaning of an incident, in the order they are glued.
SIGNAL_FIELDS = ("title", "root_cause", "error_signature", "oncall_note")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def redact_incident(incident: Incident) -> Incident:
    """Return `incident` with secrets redacted from every text field, fixes included (a copy when
    anything was redacted, the same object when there was nothing to redact)."""
    data = incident.model_dump()
    if not might_hold_secret("\n".join(_strings(data))):
        return incident

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items()}
        return value

    return Incident.model_validate(scrub(data))


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
