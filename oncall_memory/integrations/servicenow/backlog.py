"""ServiceNow's incident table as an incident source: `ingest --source servicenow`.

Reads the Table API, `GET /api/now/table/incident`, with `sysparm_query` (resolved or closed incidents
updated in the window, oldest first, plus ONCALL_MEMORY_SERVICENOW_QUERY), `sysparm_fields`,
`sysparm_display_value=all` (each field as {"value", "display_value"}: dates as stored, in UTC, and
references by name), and `sysparm_limit`/`sysparm_offset`, following the `Link: <...>; rel="next"`
header ServiceNow sends while there is more (on the same host only).

Field mapping (ServiceNow -> Incident):
    id, url                  <- number (source "servicenow"), the incident's form by its sys_id
    title                    <- short_description
    error_signature          <- description (its post-mortem sections, when it has them)
    oncall_note, fixes       <- close_notes: the fix that resolved it ("Fix: <action> => <outcome>" lines
                                as in PagerDuty notes)
    root_cause               <- the description's Root cause section, a "Root cause:" line of close_notes
    service                  <- business_service, else cmdb_ci (by name)
    severity, status         <- priority, state (by name)
    opened_at, resolved_at   <- opened_at, resolved_at (else closed_at)
    component_tags           <- category, subcategory
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from pydantic import SecretStr, ValidationError

from ...domain.incident import Incident
from ...domain.rejected import Rejected, validation_message
from ...sources import Source, Window, moment
from ...sources.comments import Comment, add_story, read_comments
from ...sources.sections import described
from ...sources.vendor_api import VendorAPI, next_link, require

FIELDS = (
    "sys_id,number,short_description,description,close_notes,business_service,cmdb_ci,priority,"
    "state,opened_at,resolved_at,closed_at,category,subcategory"
)
RESOLVED = "stateIN6,7"  # 6 Resolved, 7 Closed: the states that carry close notes
PAGE = 100


class ServiceNowAPI(VendorAPI):
    def __init__(self, url: str, user: str, password: SecretStr, **kwargs: Any):
        super().__init__(
            "ServiceNow",
            url,
            settings_hint="ONCALL_MEMORY_SERVICENOW_USER and ONCALL_MEMORY_SERVICENOW_PASSWORD (a user with the "
            "itil role, or read access to the incident table)",
            auth=(user, password.get_secret_value()),
            **kwargs,
        )

    def incidents(self, query: str) -> Iterator[dict[str, Any]]:
        params: dict[str, Any] | None = {
            "sysparm_query": query,
            "sysparm_fields": FIELDS,
            "sysparm_display_value": "all",
            "sysparm_exclude_reference_link": "true",
            "sysparm_limit": PAGE,
            "sysparm_offset": 0,
        }
        url = "/api/now/table/incident"
        while True:
            response = self.get(url, params)
            body = response.json()
            rows = body.get("result") if isinstance(body, dict) else None
            if not isinstance(rows, list) or not rows:
                return
            yield from (r for r in rows if isinstance(r, dict))
            following = next_link(response)
            if following is None:
                return
            url, params = following, None  # the link carries every parameter, the next offset included


class ServiceNowSource(Source):
    name = "servicenow"

    def __init__(self, api: ServiceNowAPI, query: str | None = None):
        self._api = api
        self._query = query

    @classmethod
    def from_settings(cls, settings: Any) -> ServiceNowSource:
        sn = settings.servicenow
        require(sn, "servicenow", "url", "user", "password", why="a user who can read the incident table")
        return cls(
            ServiceNowAPI(sn.url, sn.user, sn.password, max_retries=sn.max_retries, backoff=sn.backoff), sn.query
        )

    def close(self) -> None:
        self._api.close()

    def query(self, window: Window | None) -> str:
        parts = [RESOLVED]
        if self._query:
            parts.append(self._query)
        if window:  # encoded-query dates are UTC, as the table stores them
            parts.append(f"sys_updated_on>={window.since:%Y-%m-%d %H:%M:%S}")
            parts.append(f"sys_updated_on<{window.until:%Y-%m-%d %H:%M:%S}")
        return "^".join(parts) + "^ORDERBYsys_updated_on"

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        for row in self._api.incidents(self.query(window)):
            try:
                yield to_incident(row, self._api.base_url)
            except ValidationError as exc:
                yield Rejected(f"servicenow incident {_value(row.get('number')) or '?'}", validation_message(exc))


def _value(field: Any) -> str | None:
    """A field as stored ("value"), whichever shape the table gave it in."""
    if isinstance(field, dict):
        field = field.get("value")
    return str(field) if field not in (None, "") else None


def _shown(field: Any) -> str | None:
    """A field as people read it ("display_value": a reference's name, a choice's label)."""
    if isinstance(field, dict):
        field = field.get("display_value") or field.get("value")
    return str(field) if field not in (None, "") else None


def _when(field: Any) -> str | None:
    """ServiceNow's stored "2024-03-05 10:15:30" (UTC) as ISO 8601."""
    value = _value(field)
    if not value:
        return None
    try:
        return dt.datetime.strptime(value, "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.timezone.utc).isoformat()
    except ValueError:
        return None


def to_incident(row: dict[str, Any], base_url: str) -> Incident:
    number = _value(row.get("number")) or _value(row.get("sys_id")) or ""
    sys_id = _value(row.get("sys_id"))
    description = _shown(row.get("description")) or ""
    close_notes = _shown(row.get("close_notes")) or ""
    fields: dict[str, Any] = {
        "id": number,
        "source": "servicenow",
        "title": _shown(row.get("short_description")) or number,
        "url": f"{base_url}/nav_to.do?uri={quote('incident.do?sys_id=' + sys_id, safe='')}" if sys_id else None,
        "service": _shown(row.get("business_service")) or _shown(row.get("cmdb_ci")),
        "severity": _shown(row.get("priority")),
        "status": _shown(row.get("state")),
        "opened_at": _when(row.get("opened_at")),
        "resolved_at": _when(row.get("resolved_at")) or _when(row.get("closed_at")),
        "component_tags": [t for t in (_shown(row.get("category")), _shown(row.get("subcategory"))) if t],
        **described(description),
    }
    # The close notes are the resolving comment: "Root cause:" and "Fix: ... =>" lines read as in Jira's
    # comments, the rest is the fix that resolved it.
    resolved = moment(fields["resolved_at"])
    story = read_comments([Comment(resolved, close_notes)] if close_notes.strip() else [], resolved)
    return Incident.model_validate({k: v for k, v in add_story(fields, story).items() if v not in (None, "")})
