"""The incident record, as the backlog gives it and as the memory keeps it."""

from __future__ import annotations

import uuid
from enum import Enum
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from .facts import Facts, UtcDatetime

# Fixed namespace so a point id depends only on (source, incident id), on every machine, forever.
POINT_NAMESPACE = uuid.UUID("5b0f7a52-3c1e-4a8e-9d57-0c9a4f1e6b21")


class Outcome(str, Enum):
    """What a fix did. A small fixed vocabulary so ranking can trust it."""

    resolved = "resolved"
    mitigated = "mitigated"
    no_op = "no-op"
    worsened = "worsened"

    @property
    def worked(self) -> bool:
        return self in (Outcome.resolved, Outcome.mitigated)


WORKED = frozenset(o.value for o in Outcome if o.worked)


def worked(outcome: str) -> bool:
    """Did a fix with this stored outcome work? (Ranking asks this of every candidate's payload.)"""
    return outcome in WORKED


class Fix(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: str = Field(min_length=1)
    outcome: Outcome
    # When it was tried: the same action can stop working later. Left out of the payload when unknown, so
    # records written before it existed keep their hash.
    at: UtcDatetime | None = Field(default=None, exclude_if=lambda at: at is None)


class Incident(Facts):
    """One past incident. `id` and `title` are required; everything else is optional."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    SECRET_FREE: ClassVar[tuple[str, ...]] = ("id",)

    id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    source: str = "jsonl"
    root_cause: str | None = None
    error_signature: str | None = None
    oncall_note: str | None = None
    signature: str | None = None
    severity: str | None = None
    status: str | None = None
    opened_at: UtcDatetime | None = None
    resolved_at: UtcDatetime | None = None
    url: str | None = None
    fixes_attempted: list[Fix] = []

    @property
    def point_id(self) -> str:
        return point_id(self.source, self.id)

    @property
    def fixes_worked(self) -> list[str]:
        return [f.action for f in self.fixes_attempted if f.outcome.worked]

    @property
    def fixes_failed(self) -> list[str]:
        """Fixes tried without effect (or that made things worse): what not to try first."""
        return [f.action for f in self.fixes_attempted if not f.outcome.worked]


def point_id(source: str, incident_id: str) -> str:
    """The Qdrant point id of an incident: uuid5 of its source and id, so re-ingest overwrites."""
    return str(uuid.uuid5(POINT_NAMESPACE, f"{source}:{incident_id}"))
