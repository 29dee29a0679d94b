"""incident.io as an incident source: `ingest --source incident_io`.

Reads `GET /v2/incidents` with `status_category[one_of]=closed` and the window on `created_at`
(`created_at[gte]`/`created_at[lte]`, dates), `page_size` and the `after` cursor from
`pagination_meta.after` until a page comes without one; then each incident's updates,
`GET /v2/incident_updates?incident_id=...`, paged the same way. Bearer API key (read-only is enough).

Field mapping (incident.io -> Incident):
    id, url                  <- reference (INC-123; else id) (source "incident_io"), permalink
    title                    <- name
    root_cause, error_signature, oncall_note
                             <- summary (Markdown) through the post-mortem section reader; else the
                                error signature
    fixes_attempted, notes   <- the updates' messages, read as comments: the last one by the time the
                                incident closed is the fix; "Root cause:" / "Fix: ... => ..." lines
    severity, status         <- severity.name, incident_status.name
    service                  <- the first value of a custom field whose name holds "service"
    opened_at, resolved_at   <- created_at; the "Resolved at" (else "Closed at") timestamp, else updated_at
Post-mortem documents live in Google Docs, Notion or Confluence: their link is not followed here
(export them to Markdown and `ingest FOLDER`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from pydantic import SecretStr, ValidationError

from ...domain.incident import Incident
from ...domain.rejected import Rejected, validation_message
from ...sources import Source, Window, moment
from ...sources.comments import Comment, add_story, read_comments
from ...sources.sections import described
from ...sources.vendor_api import VendorAPI, require

PAGE = 100


class IncidentIoAPI(VendorAPI):
    def __init__(self, url: str, token: SecretStr, **kwargs: Any):
        super().__init__(
            "incident.io",
            url,
            settings_hint="ONCALL_MEMORY_INCIDENT_IO_TOKEN (an API key that can view incidents)",
            headers={"Authorization": f"Bearer {token.get_secret_value()}"},
            **kwargs,
        )

    def incident(self, incident_id: str) -> dict[str, Any]:
        """One incident (`GET /v2/incidents/{id}`), as the listing gives it."""
        body = self.get(f"/v2/incidents/{quote(incident_id, safe='')}").json()
        found = body.get("incident") if isinstance(body, dict) else None
        return found if isinstance(found, dict) else {}

    def listing(self, path: str, key: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Every item of a cursor-paged listing (`pagination_meta.after`)."""
        query = {**params, "page_size": PAGE}
        while True:
            body = self.get(path, query).json()
            items = body.get(key) if isinstance(body, dict) else None
            if not isinstance(items, list):
                return
            yield from (i for i in items if isinstance(i, dict))
            after = (body.get("pagination_meta") or {}).get("after")
            if not after or not items:
                return
            query = {**query, "after": after}


class IncidentIoSource(Source):
    name = "incident_io"

    def __init__(self, api: IncidentIoAPI):
        self._api = api

    @classmethod
    def from_settings(cls, settings: Any) -> IncidentIoSource:
        return cls(cls.api_from(settings))

    @staticmethod
    def api_from(settings: Any) -> IncidentIoAPI:
        io = settings.incident_io
        require(io, "incident_io", "token", why="an API key that can view incidents")
        return IncidentIoAPI(io.url, io.token, max_retries=io.max_retries, backoff=io.backoff)

    def close(self) -> None:
        self._api.close()

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        params: dict[str, Any] = {"status_category[one_of]": "closed"}
        if window is not None:  # whole days, both ends included: the window only grows
            params["created_at[gte]"] = f"{window.since:%Y-%m-%d}"
            params["created_at[lte]"] = f"{window.until:%Y-%m-%d}"
        for raw in self._api.listing("/v2/incidents", "incidents", params):
            updates = list(
                self._api.listing("/v2/incident_updates", "incident_updates", {"incident_id": raw.get("id")})
            )
            try:
                yield to_incident(raw, updates)
            except ValidationError as exc:
                yield Rejected(f"incident.io incident {raw.get('reference') or raw.get('id')}", validation_message(exc))


def to_incident(raw: dict[str, Any], updates: list[dict[str, Any]]) -> Incident:
    fields: dict[str, Any] = {
        "id": str(raw.get("reference") or raw.get("id") or ""),
        "source": "incident_io",
        "title": raw.get("name") or raw.get("reference") or "",
        "url": raw.get("permalink"),
        "severity": _name(raw.get("severity")),
        "status": _name(raw.get("incident_status")),
        "service": _service(raw.get("custom_field_entries")),
        "opened_at": moment(raw.get("created_at")),
        "resolved_at": _timestamp(raw, "resolved at") or _timestamp(raw, "closed at") or moment(raw.get("updated_at")),
        **described(str(raw.get("summary") or "")),
    }
    story = read_comments(
        [Comment(moment(u.get("created_at")), str(u.get("message") or "")) for u in updates], fields["resolved_at"]
    )
    return Incident.model_validate({k: v for k, v in add_story(fields, story).items() if v not in (None, "")})


def _name(value: Any) -> str | None:
    return str(value["name"]) if isinstance(value, dict) and value.get("name") else None


def _timestamp(raw: dict[str, Any], name: str) -> Any:
    for entry in raw.get("incident_timestamp_values") or []:
        if not isinstance(entry, dict):
            continue
        label = str((entry.get("incident_timestamp") or {}).get("name") or "").lower()
        if label == name:
            return moment((entry.get("value") or {}).get("value"))
    return None


def _service(entries: Any) -> str | None:
    """The first value of a custom field named like "Affected services" (catalog entry, option or text)."""
    for entry in entries if isinstance(entries, list) else []:
        if (
            not isinstance(entry, dict)
            or "service" not in str((entry.get("custom_field") or {}).get("name", "")).lower()
        ):
            continue
        for value in entry.get("values") or []:
            if not isinstance(value, dict):
                continue
            for key in ("value_catalog_entry", "value_option"):
                if isinstance(value.get(key), dict):
                    found = value[key].get("name") or value[key].get("value")
                    if found:
                        return str(found)
            if value.get("value_text"):
                return str(value["value_text"])
    return None
