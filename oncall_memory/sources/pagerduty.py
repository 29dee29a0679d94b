"""PagerDuty REST API v2 as an incident source, through httpx.

Field mapping (PagerDuty -> Incident):
    id                       <- incident.id            (source "pagerduty": point id uuid5("pagerduty:<id>"))
    title                    <- incident.title
    service                  <- incident.service.summary
    url                      <- incident.html_url
    status, severity         <- incident.status, incident.priority.summary (else incident.urgency)
    opened_at, resolved_at   <- incident.created_at, incident.resolved_at (else last_status_change_at once resolved)
    error_signature          <- first alert's summary, plus body.details when it is text
    signature                <- first alert's alert_key (the grouping key), when present
    root_cause               <- note lines starting "Root cause:"
    fixes_attempted          <- note lines "Fix: <action> => <resolved|mitigated|no-op|worsened>"
    oncall_note              <- every other note line, oldest first
    env, flavor, component_tags <- not in PagerDuty's model: from a "env:", "flavor:", "tags:" note line
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
from pydantic import SecretStr, ValidationError

from ..backlog import Rejected, validation_message
from ..errors import SourceFailed
from ..http_retry import Refused, RetriesExhausted, send
from ..incident import Incident, Outcome
from . import Source, Window

_ACCEPT = "application/vnd.pagerduty+json;version=2"
_FIX = re.compile(r"^fix:\s*(?P<action>.+?)\s*=>\s*(?P<outcome>[\w-]+)\s*$", re.I)
_OUTCOMES = {o.value for o in Outcome}  # a "Fix:" line with another outcome stays free text, not lost
_FACT = re.compile(r"^(?P<key>root cause|env|flavor|tags):\s*(?P<value>.+)$", re.I)


class PagerDutySource(Source):
    name = "pagerduty"
    PAGE = 100

    def __init__(
        self,
        token: SecretStr,
        *,
        base_url: str = "https://api.pagerduty.com",
        service_ids: list[str] | None = None,
        max_retries: int = 4,
        backoff: float = 1.0,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ):
        self._token = token
        self._service_ids = service_ids or []
        self._max_retries = max_retries
        self._backoff = backoff
        self._http = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        """Resolved incidents in `window`, with notes and first alert. Raises `SourceFailed` after retries."""
        params: dict[str, Any] = {"statuses[]": "resolved", "limit": self.PAGE, "time_zone": "UTC"}
        if window:
            params.update(since=window.since.isoformat(), until=window.until.isoformat())
        if self._service_ids:
            params["service_ids[]"] = self._service_ids
        offset = 0
        while True:
            page = self._get("/incidents", {**params, "offset": offset})
            for raw in page.get("incidents", []):
                yield self._incident(raw)
            if not page.get("more"):
                return
            offset += len(page.get("incidents", [])) or self.PAGE

    def _incident(self, raw: dict) -> Incident | Rejected:
        where = f"pagerduty incident {raw.get('id', '?')}"
        notes = self._get(f"/incidents/{raw['id']}/notes", {}).get("notes", [])
        alerts = self._get(f"/incidents/{raw['id']}/alerts", {"limit": 1}).get("alerts", [])
        try:
            return to_incident(raw, notes, alerts[0] if alerts else None)
        except ValidationError as exc:
            return Rejected(where, validation_message(exc))

    def _get(self, path: str, params: dict) -> dict:
        headers = {"Authorization": f"Token token={self._token.get_secret_value()}", "Accept": _ACCEPT}
        try:
            response = send(self._http, "GET", path, what=f"PagerDuty GET {path}", max_retries=self._max_retries,
                            backoff=self._backoff, params=params, headers=headers)
        except Refused as exc:
            raise SourceFailed(
                f"PagerDuty GET {path} answered {exc.response.status_code}: {exc.response.text[:200]} "
                "(check ONCALL_MEMORY_PAGERDUTY_TOKEN and its permissions)"
            ) from exc
        except RetriesExhausted as exc:
            raise SourceFailed(f"PagerDuty GET {path} failed after {self._max_retries} retries ({exc.problem})") from exc
        return response.json()


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
        "resolved_at": raw.get("resolved_at") or (raw.get("last_status_change_at") if raw.get("status") == "resolved" else None),
    }
    if first_alert:
        details = (first_alert.get("body") or {}).get("details")
        parts = [first_alert.get("summary"), details if isinstance(details, str) else None]
        fields["error_signature"] = " | ".join(p for p in parts if p) or None
        fields["signature"] = first_alert.get("alert_key")
    free_lines, root_causes, fixes = [], [], []
    for note in sorted(notes, key=lambda n: n.get("created_at") or ""):
        for line in (note.get("content") or "").splitlines():
            line = line.strip()
            if not line:
                continue
            fix = _FIX.match(line)
            if fix and fix["outcome"].lower() in _OUTCOMES:
                fixes.append({"action": fix["action"], "outcome": fix["outcome"].lower()})
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
    return Incident.model_validate(fields)
