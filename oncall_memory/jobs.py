"""A job: what to look up (one alert, or an Alertmanager group's firing alerts) and where the answer goes, or
an incident to remember. Each pager's webhook makes them (`integrations/<pager>/webhook.py`); the service's
outbox delivers them.

Each alert has a key that identifies it across redeliveries (that key makes posting exactly once); a group's
job key names the alerts it holds.
"""

from __future__ import annotations

from typing import Literal, Protocol

from .domain.alert import Alert
from .domain.facts import Redacted


class Item(Redacted):
    key: str  # "pagerduty:P1234", "alertmanager:<fingerprint>:<startsAt>", "opsgenie:<alertId>"
    alert: Alert
    title: str  # how the alert is named in the message: its rule and the labels that tell it from its group
    detail: str | None = None  # its description, when the title is not all of it
    runbook: str | None = None  # its runbook link (http(s) only)


class Job(Redacted):
    key: str  # the alert's key, or for a group, "alertmanager:<groupKey>" (+ "#<hash of its new alerts>")
    items: list[Item]
    kind: Literal["lookup", "learn"] = "lookup"  # learn: a resolved or annotated incident to remember
    group: str | None = None  # a group's name (Alertmanager's alertname group label)
    pagerduty_incident: str | None = None  # post a note on this incident (lookup), or remember it (learn)
    jira_issue: str | None = None  # learn: remember this Jira issue
    incident_io_incident: str | None = None  # learn: remember this incident.io incident (its id)
    gitlab_issue: str | None = None  # learn: remember this GitLab issue ("<project id>#<iid>")

    @classmethod
    def single(cls, key: str, alert: Alert, title: str, pagerduty_incident: str | None = None) -> Job:
        return cls(key=key, items=[Item(key=key, alert=alert, title=title)], pagerduty_incident=pagerduty_incident)

    @classmethod
    def learn(cls, key: str, event: str, **record: str) -> Job:
        """Read a record back and remember it: `record` names it in the field its learner reads (`jira_issue=`),
        and `event` says what happened (the one item is a label, never looked up)."""
        return cls(key=key, kind="learn", items=[Item(key=key, alert=Alert(text=event), title=event)], **record)

    @property
    def title(self) -> str:
        """How the message names what fired: the alert's title, or how many of the group fired."""
        if len(self.items) == 1:
            return self.items[0].title
        names = self.group or ", ".join(dict.fromkeys(i.alert.text.split(" - ")[0] for i in self.items))
        return f"{len(self.items)} firing: {names}"


class Refiner(Protocol):
    """Reads a job's alerts further before they are looked up (what a pager's webhook leaves out, read back
    from its API): the job, richer or as it was, never an error (a failed read is logged and the job looked up
    as it came). Called on the dispatcher's thread, not the event loop; an integration offers its refiners
    through the `refiners` hook."""

    def __call__(self, job: Job) -> Job: ...

    def close(self) -> None: ...
