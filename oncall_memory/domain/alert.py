"""A new alert, and the hard filters a lookup may carry."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from . import payload as P
from .blank import NOT_BLANK
from .conditions import Condition, Match, Range
from .facts import Facts, UtcDatetime
from .promql import MAX_METRICS, is_metric_name


class Alert(Facts):
    """What fired: its text, and facts about where (used to prefer, never to exclude)."""

    text: str = Field(json_schema_extra={"minLength": 1, "pattern": NOT_BLANK})  # not blank (said by `_not_blank`)
    signature: str | None = None  # the pager's own grouping key, if it has one
    fact_sources: dict[str, str] = {}  # where a fact was found ("container label"), for the reasons
    # The metrics the alert's rule watches (`promql.watched_metrics` reads them from a ruler's generatorURL),
    # searched as its words beside the text.
    metrics: list[str] = Field(default=[], max_length=MAX_METRICS)

    @classmethod
    def again(cls, incident: dict[str, Any]) -> Alert:
        """A stored incident (its payload) as if it fired again."""
        return cls(
            text=incident.get(P.TEXT) or incident["title"],
            service=incident.get(P.SERVICE),
            env=incident.get(P.ENV),
            flavor=incident.get(P.FLAVOR),
            component_tags=incident.get(P.TAGS) or [],
        )

    @field_validator("metrics")
    @classmethod
    def _metric_names(cls, names: list[str]) -> list[str]:
        # Only what is spelt like a metric (`promql.is_metric_name`): an answer that names one is never "low",
        # so a caller's generic word ("error") must not count as one.
        return [n for n in names if is_metric_name(n)]

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("alert text is empty: give the alert's summary or description")
        return value


class Filters(BaseModel):
    """Hard filters: a neighbour must match every one given. Applied inside the engine's query."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    service: str | None = None
    env: str | None = None
    flavor: str | None = None
    component_tags: list[str] = []  # every one of these tags
    status: str | None = None
    severity: str | None = None
    since: UtcDatetime | None = None  # opened at or after
    until: UtcDatetime | None = None  # opened before

    @field_validator("since", "until", mode="before")
    @classmethod
    def _a_time_not_a_number(cls, value: Any) -> Any:
        # The schema says a date-time string; a bare number would be read as seconds since 1970.
        if isinstance(value, (bool, int, float)):
            raise ValueError("give a date or a time (2026-11-01, 2026-11-01T03:00:00Z), not a number")
        return value

    def conditions(self) -> list[Condition]:
        """The filters as engine-neutral conditions (see `conditions.py`); empty when none is set."""
        where: list[Condition] = [
            Match(field, value)
            for field, value in (
                (P.SERVICE, self.service),
                (P.ENV, self.env),
                (P.FLAVOR, self.flavor),
                (P.STATUS, self.status),
                (P.SEVERITY, self.severity),
            )
            if value
        ]
        where += [Match(P.TAGS, tag.lower()) for tag in self.component_tags]
        if self.since or self.until:
            where.append(Range(P.OPENED_AT, gte=self.since, lt=self.until))
        return where
