"""PagerDuty's live incidents for the agents' door (`live.LiveIncidents`): an incident read back through the
REST API as its webhook would read it, and a note posted with the From: address PagerDuty requires."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...domain.alert import Alert
from ...live import LiveIncidents
from .api import PagerDutyAPI
from .webhook import PAGERDUTY_ID, rest_incident_alert


class PagerDutyIncidents(LiveIncidents):
    name = "PagerDuty"
    id_pattern = PAGERDUTY_ID

    def __init__(self, api: PagerDutyAPI):
        self.api = api  # a client with a From address (notes need one)

    def alert(self, incident_id: str, known: Mapping[str, Iterable[str]] | None = None) -> Alert:
        return rest_incident_alert({"id": incident_id, **self.api.incident(incident_id)}, known)

    def post_note(self, incident_id: str, note: str) -> int:
        return self.api.post_note(incident_id, note).status_code

    def close(self) -> None:
        self.api.close()
