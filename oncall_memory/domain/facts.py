"""The facts an incident, an alert and a labelled query share: where it happened and what it touched.

One model, so the tag rule and the time-zone rule exist once.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, field_validator, model_validator

from ..redact import holds_secret, is_already_redacted, redact, redact_each, secret_spans
from ..redact.records import cap_each


def as_utc(value: datetime) -> datetime:
    """A time without a zone is UTC: pagers and exports in this field write UTC and rarely say so."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]


def tidy_tags(tags: list[str]) -> list[str]:
    """One spelling per tag (trimmed, lower case), no duplicates, first-seen order: tags are compared
    across teams and tools."""
    return list(dict.fromkeys(t.strip().lower() for t in tags if t.strip()))


class Redacted(BaseModel):
    """A model whose every string is cut to the field limit and redacted before anything else reads it
    (tags are lower-cased, whitespace trimmed, times parsed only afterwards): the boundary text passes
    where it enters. A field in `SECRET_FREE` that holds a secret is refused instead: redacting an
    identifier would merge two records into one. Built inside `already_redacted()` (the memory reading
    back what it stored), nothing is scanned again."""

    SECRET_FREE: ClassVar[tuple[str, ...]] = ()
    # Identifiers random by design (a pager's dedup key looks like a secret): redacted with a marker keyed by
    # what it replaced, so two keys do not all become the same "[REDACTED]" and match each other.
    IDENTIFIERS: ClassVar[tuple[str, ...]] = ("signature",)

    @model_validator(mode="before")
    @classmethod
    def _redact(cls, data: Any) -> Any:
        if not isinstance(data, dict) or is_already_redacted():
            return data
        if not holds_secret(data):
            return cap_each(data)
        for field in cls.SECRET_FREE:
            value = data.get(field)
            found = secret_spans(value) if isinstance(value, str) else []
            if found:
                raise ValueError(f"{field} holds a secret ({found[0][1]}); give the record an id without one")
        return {
            k: redact(v, keyed=True) if k in cls.IDENTIFIERS and isinstance(v, str) else redact_each(v)
            for k, v in data.items()
        }


class Facts(Redacted):
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
