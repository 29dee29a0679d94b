"""A job: what to look up (one alert, or an Alertmanager group's firing alerts) and where the answer goes, or
an incident to remember. Each pager's webhook makes them (`integrations/<pager>/webhook.py`); the service's
outbox delivers them.

Each alert has a key that identifies it across redeliveries (that key makes posting exactly once); a group's
job key names the alerts it holds.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import model_validator

from .domain.alert import Alert
from .domain.facts import Redacted

OLD_RECORD_FIELDS = ("_incident", "_issue")  # see `Job._record_named_by_its_vendor`


class Item(Redacted):
    key: str  # "pagerduty:P1234", "alertmanager:<fingerprint>:<startsAt>", "opsgenie:<alertId>"
    alert: Alert
    title: str  # how the alert is named in the message: its rule and the labels that tell it from its group
    detail: str | None = None  # its description, when the title is not all of it
    runbook: str | None = None  # its runbook link (http(s) only)
    rule: str | None = None  # its alert rule's name (Alertmanager's and Grafana's `alertname`)


class Job(Redacted):
    key: str  # the alert's key, or for a group, "alertmanager:<groupKey>" (+ "#<hash of its new alerts>")
    items: list[Item]
    kind: Literal["lookup", "learn"] = "lookup"  # learn: a resolved or annotated incident to remember
    group: str | None = None  # a group's name (Alertmanager's alertname group label)
    # The pager's or tracker's own id of what this job is about, for the integration whose key it bears
    # (`<name>:`, `<name>-learn:`): the incident a lookup's note goes on, or the record a learner reads back
    # and remembers ("P1234", "OPS-12", "<project id>#<iid>").
    record: str | None = None
    # A large group's alerts, claimed by their keys before they are read: alert key -> the alert as its pager
    # posted it (redacted with the body). The webhook that made the job reads them into `items` on the worker's
    # thread, before their lookup (`Webhook.read`): a storm of ten thousand alerts is acknowledged without
    # first reading each one (0.6 s of its 202 was that reading).
    unread: dict[str, dict[str, Any]] = {}

    @model_validator(mode="before")
    @classmethod
    def _record_named_by_its_vendor(cls, data: Any) -> Any:
        # An outbox keeps jobs across an upgrade. Those written before 2026-12 named the record in a field of
        # its vendor's (`<vendor>_incident`, `<vendor>_issue`): read as `record`, so they are still delivered.
        if isinstance(data, dict) and (old := [k for k in data if k.endswith(OLD_RECORD_FIELDS)]):
            named = next((data[k] for k in old if data[k] is not None), None)
            data = {k: v for k, v in data.items() if k not in old}
            data.setdefault("record", named)
        return data

    @classmethod
    def single(cls, key: str, alert: Alert, title: str, record: str | None = None) -> Job:
        return cls(key=key, items=[Item(key=key, alert=alert, title=title)], record=record)

    @classmethod
    def learn(cls, key: str, event: str, record: str) -> Job:
        """Read `record` back and remember it; `event` says what happened (the one item is a label, never
        looked up)."""
        return cls(key=key, kind="learn", items=[Item(key=key, alert=Alert(text=event), title=event)], record=record)

    @property
    def alert_keys(self) -> list[str]:
        """Every alert's key, read or not, in the order they came."""
        return [i.key for i in self.items] + list(self.unread)

    def record_of(self, integration: str) -> str | None:
        """The record, when this job is `integration`'s (`keyed_by`)."""
        return self.record if keyed_by(self.key, integration) else None

    @property
    def title(self) -> str:
        """How the message names what fired: the alert's title, or how many of the group fired."""
        if len(self.items) == 1:
            return self.items[0].title
        names = self.group or ", ".join(dict.fromkeys(i.alert.text.split(" - ")[0] for i in self.items))
        return f"{len(self.items)} firing: {names}"


def short_key(key: str, limit: int = 72) -> str:
    """A job's key as a log line or a table shows it: an Alertmanager group's runs to 200 characters (its
    group key, then a hash of its alerts), so the middle goes."""
    return key if len(key) <= limit else f"{key[: limit - 15]}…{key[-14:]}"


def keyed_by(key: str, integration: str) -> bool:
    """Is this job key `integration`'s: `<integration>:...`, or its learner's `<integration>-learn:...`? (A key
    makes posting exactly once, so no integration's jobs may take another's.)"""
    return key.startswith((f"{integration}:", f"{integration}-learn:"))


class Refiner(Protocol):
    """Reads a job's alerts further before they are looked up (what a pager's webhook leaves out, read back
    from its API): the job, richer or as it was, never an error (a failed read is logged and the job looked up
    as it came). Called on the dispatcher's thread, not the event loop; an integration offers its refiners
    through the `refiners` hook."""

    def __call__(self, job: Job) -> Job: ...

    def close(self) -> None: ...
