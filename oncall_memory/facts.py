"""The facts an incident, an alert and a labelled query share: where it happened and what it touched.

One model, so the tag rule and the time-zone rule exist once.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, field_validator


def as_utc(value: datetime) -> datetime:
    """A time without a zone is UTC: pagers and exports in this field write UTC and rarely say so."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]


def tidy_tags(tags: list[str]) -> list[str]:
    """One spelling per tag (trimmed, lower case), no duplicates, first-seen order: tags are compared
    across teams and tools."""
    return list(dict.fromkeys(t.strip().lower() for t in tags if t.strip()))


class Facts(BaseModel):
    """Where something happened. On an alert these are soft preferences; on an incident, payload."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    service: str | None = None
    env: str | None = None
    flavor: str | None = None
    component_tags: list[str] = []

    @field_validator("component_tags")
    @classmethod
    def _tidy_tags(cls, tags: list[str]) -> list[str]:
        return tidy_tags(tags)
