"""A new alert, and the hard filters a lookup may carry."""

from __future__ import annotations

from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict, field_validator
from qdrant_client import models

from . import payload as P


class Alert(BaseModel):
    """What fired: its text, and facts about where (used to prefer, never to exclude)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    text: str
    service: str | None = None
    env: str | None = None
    flavor: str | None = None
    component_tags: list[str] = []
    signature: str | None = None  # the pager's own grouping key, if it has one

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("alert text is empty: give the alert's summary or description")
        return value

    @field_validator("component_tags")
    @classmethod
    def _tidy_tags(cls, tags: list[str]) -> list[str]:
        return list(dict.fromkeys(t.strip().lower() for t in tags if t.strip()))


class Filters(BaseModel):
    """Hard filters: a neighbour must match every one given. Applied inside the Qdrant query."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    service: str | None = None
    env: str | None = None
    flavor: str | None = None
    component_tags: list[str] = []  # every one of these tags
    status: str | None = None
    severity: str | None = None
    since: datetime | None = None  # opened at or after
    until: datetime | None = None  # opened before

    @field_validator("since", "until")
    @classmethod
    def _assume_utc(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value

    def matches(self, payload: dict) -> bool:
        """The same test as `to_qdrant`, on one payload: for points found without a Qdrant query."""
        for field, value in ((P.SERVICE, self.service), (P.ENV, self.env), (P.FLAVOR, self.flavor),
                             (P.STATUS, self.status), (P.SEVERITY, self.severity)):
            if value and payload.get(field) != value:
                return False
        if not set(t.lower() for t in self.component_tags) <= set(payload.get(P.TAGS) or []):
            return False
        if self.since or self.until:
            stamp = payload.get(P.OPENED_AT)
            if not stamp:
                return False
            opened = datetime.fromisoformat(stamp)
            if (self.since and opened < self.since) or (self.until and opened >= self.until):
                return False
        return True

    def to_qdrant(self) -> models.Filter | None:
        must: list[models.Condition] = []
        for field, value in ((P.SERVICE, self.service), (P.ENV, self.env), (P.FLAVOR, self.flavor),
                             (P.STATUS, self.status), (P.SEVERITY, self.severity)):
            if value:
                must.append(models.FieldCondition(key=field, match=models.MatchValue(value=value)))
        for tag in self.component_tags:
            must.append(models.FieldCondition(key=P.TAGS, match=models.MatchValue(value=tag.lower())))
        if self.since or self.until:
            must.append(
                models.FieldCondition(key=P.OPENED_AT, range=models.DatetimeRange(gte=self.since, lt=self.until))
            )
        return models.Filter(must=must) if must else None
