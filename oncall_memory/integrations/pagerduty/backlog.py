"""PagerDuty REST API v2 as an incident source (the client, its limits and slicing: `api.py`).

Field mapping (PagerDuty -> Incident):
    id                       <- incident.id            (source "pagerduty": point id uuid5("pagerduty:<id>"))
    title                    <- incident.title
    service                  <- incident.service.summary
    url                      <- incident.html_url
    status, severity         <- incident.status, incident.priority.summary (else incident.urgency)
    opened_at, resolved_at   <- incident.created_at, incident.resolved_at (else last_status_change_at once resolved)
    error_signature          <- oldest alert's summary, plus body.details when it is text
    signature                <- oldest alert's alert_key (the grouping key), when present
    root_cause               <- note lines starting "Root cause:"
    fixes_attempted          <- note lines "Fix: <action> => <resolved|mitigated|no-op|worsened>"
    oncall_note              <- every other note line, oldest first
    env, flavor, component_tags <- not in PagerDuty's model: from a "env:", "flavor:", "tags:" note line, else
                                   from the tags in a Datadog monitor's title ("[Triggered on {env:prod}] ...")
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from ...datadir import write_atomic
from ...domain.incident import Incident, Outcome
from ...domain.label_facts import facts_from_labels, monitor_tags
from ...domain.rejected import Rejected, validation_message
from ...sources import FIRST_YEAR, Source, Window
from ...sources.comments import fix_line
from .api import PagerDutyAPI

_OUTCOMES = {o.value for o in Outcome}  # a "Fix:" line with another outcome stays free text, not lost
_FACT = re.compile(r"^(?P<key>root cause|env|flavor|tags):\s*(?P<value>.+)$", re.I)
# A responder's verdict on a suggestion: "oncall-memory: INC-1042 helped", "oncall-memory: INC-1042 not related".
_VERDICT = re.compile(r"^oncall-memory:\s*(?P<id>\S+)\s+(?P<verdict>helped|not[ -]related)\s*\.?$", re.I)
OWN_NOTE = re.compile(r"\(oncall-memory ref [0-9a-f]+\)\s*$")  # the marker on the notes the service posts


class Verdict(NamedTuple):
    suggested: str
    verdict: str  # "helped" | "not related"
    who: str
    at: str | None
    note: str  # the note's id: the same note read twice counts once


def verdicts(notes: list[dict]) -> list[Verdict]:
    """Responders' feedback lines in an incident's notes."""
    out = []
    for note in notes:
        for line in (note.get("content") or "").splitlines():
            if match := _VERDICT.match(line.strip()):
                who = (note.get("user") or {}).get("summary") or "pagerduty"
                out.append(
                    Verdict(
                        match["id"],
                        "helped" if match["verdict"].lower() == "helped" else "not related",
                        who,
                        note.get("created_at"),
                        str(note.get("id") or ""),
                    )
                )
    return out


class PagerDutySource(Source):
    """Resolved incidents from PagerDuty, with their notes and oldest alert.

    With a `state_file`, incidents seen open are remembered and looked at again on every later run until
    they resolve, so one open longer than the window is not missed.
    """

    name = "pagerduty"

    def __init__(self, api: PagerDutyAPI, *, service_ids: list[str] | None = None, state_file: Path | None = None):
        self._api = api
        self._service_ids = service_ids or []
        self._state_file = state_file

    def close(self) -> None:
        self._api.close()

    def one_shot(self) -> None:
        self._state_file = None

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        """Resolved incidents created in `window` (None: all history), then the ones remembered open that
        have resolved since. Raises `SourceFailed` after retries."""
        since = window.since if window else FIRST_YEAR
        until = window.until if window else datetime.now(timezone.utc)
        seen: set[str] = set()
        for raw in self._api.incidents(since, until, statuses=["resolved"], service_ids=self._service_ids):
            seen.add(raw["id"])
            yield self._incident(raw)
        if self._state_file is None:
            return
        still_open = set()
        for incident_id in sorted(self._remembered() - seen):
            raw = self._api.incident(incident_id)
            if raw.get("status") == "resolved":
                yield self._incident(raw)
            elif raw:
                still_open.add(incident_id)
        for raw in self._api.incidents(
            since, until, statuses=["triggered", "acknowledged"], service_ids=self._service_ids
        ):
            still_open.add(raw["id"])
        self._remember(still_open)

    def _incident(self, raw: dict) -> Incident | Rejected:
        where = f"pagerduty incident {raw.get('id', '?')}"
        notes = self._api.notes(raw["id"])
        try:
            return to_incident(raw, notes, self._api.oldest_alert(raw["id"]))
        except ValidationError as exc:
            return Rejected(where, validation_message(exc))

    def _remembered(self) -> set[str]:
        if self._state_file is None:
            return set()
        try:
            return set(json.loads(self._state_file.read_text()).get("open", []))
        except (OSError, ValueError):
            return set()

    def _remember(self, open_ids: set[str]) -> None:
        if self._state_file is None:
            return
        write_atomic(self._state_file, json.dumps({"open": sorted(open_ids)}))


def to_incident(raw: dict, notes: list[dict], first_alert: dict | None) -> Incident:
    """Map one PagerDuty incident, its notes and first alert onto an `Incident` (see the module doc)."""
    fields: dict[str, Any] = {
        "id": raw["id"],
        "source": "pagerduty",
        "title": raw.get("title") or raw.get("summary") or "",
        "service": (raw.get("service") or {}).get("summary"),
        "url": raw.get("html_url"),
        "status": raw.get("status"),
        "severity": (raw.get("priority") or {}).get("summary") or raw.get("urgency"),
        "opened_at": raw.get("created_at"),
        "resolved_at": raw.get("resolved_at")
        or (raw.get("last_status_change_at") if raw.get("status") == "resolved" else None),
    }
    if first_alert:
        details = (first_alert.get("body") or {}).get("details")
        parts = [first_alert.get("summary"), details if isinstance(details, str) else None]
        fields["error_signature"] = " | ".join(p for p in parts if p) or None
        fields["signature"] = first_alert.get("alert_key")
    free_lines, root_causes, fixes = [], [], []
    for note in sorted(notes, key=lambda n: n.get("created_at") or ""):
        if OWN_NOTE.search(note.get("content") or ""):
            continue  # what the service posted: suggestions, not this incident's story
        for line in (note.get("content") or "").splitlines():
            line = line.strip()
            if not line or _VERDICT.match(line):
                continue  # feedback is read by `verdicts`
            fix = fix_line(line)
            if fix and fix[1].lower() in _OUTCOMES:
                fixes.append({"action": fix[0], "outcome": fix[1].lower(), "at": note.get("created_at")})
            elif fact := _FACT.match(line):
                key, value = fact["key"].lower(), fact["value"].strip()
                if key == "root cause":
                    root_causes.append(value)
                elif key == "tags":
                    fields["component_tags"] = [t.strip() for t in value.split(",")]
                else:
                    fields[key] = value
            else:  # free text, including a "Fix:" line whose outcome is not one we know
                free_lines.append(line)
    fields["root_cause"] = " ".join(root_causes) or None
    fields["oncall_note"] = " ".join(free_lines) or None
    fields["fixes_attempted"] = fixes
    # A Datadog monitor's title names its group's tags: their env and components are the incident's, as they
    # will be its next alert's (`webhook.pagerduty_alert`), unless a note line said otherwise.
    if tags := monitor_tags(fields["title"]):
        tagged = facts_from_labels(tags)
        for name in ("env", "flavor", "component_tags"):
            if tagged.get(name) and not fields.get(name):
                fields[name] = tagged[name]
    return Incident.model_validate(fields)
