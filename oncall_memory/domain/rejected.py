"""What could not become an incident, and why, in words that say what to fix: a rejected line or record,
and a validation error told as the field to fix. Every source and reader of input uses these."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from ..redact import redact


@dataclass(frozen=True)
class Rejected:
    """A line that could not become an incident, and why, in words that say what to fix."""

    where: str  # "path:line"
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def validation_message(exc: ValidationError, *, known: str = "see docs/integrations.md for the incident format") -> str:
    """A pydantic error in words that say which field to fix and how (`known`: where the fields are listed),
    redacted: a field's name is the input's own (a token pasted as a JSON key came back in the message)."""
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if not field:  # a check of the whole record: its message names the field
            parts.append(msg)
            continue
        if err["type"] == "missing":
            msg = "is required"
        elif err["type"] == "extra_forbidden":
            msg = f"is not a known field ({known})"
        parts.append(f"{field} {msg}" if err["type"] in ("missing", "extra_forbidden") else f"{field}: {msg}")
    return redact("; ".join(parts))
