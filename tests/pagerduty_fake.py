"""PagerDuty's REST API v2 played by pytest-httpserver, keeping to PagerDuty's published rules:
since/until at most 6 months (400 "Invalid Input Provided" otherwise), offset + limit ≤ 10,000, `total`
only when asked, alerts sortable by created_at, notes readable and writable, 429 with `ratelimit-reset`."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from werkzeug import Request, Response

TOKEN = "pd-secret-token-123"
SIX_MONTHS = timedelta(days=183)


def pd_incident(n: int, *, created: str = "2026-11-20T03:33:00Z", **extra) -> dict:
    return {
        "id": f"P{n:05d}",
        "type": "incident",
        "title": f"IPsec tunnel down #{n}",
        "status": "resolved",
        "urgency": "high",
        "created_at": created,
        "last_status_change_at": created.replace("03:33", "04:10"),
        "html_url": f"https://acme.pagerduty.com/incidents/P{n:05d}",
        "service": {"id": "PSVC1", "type": "service_reference", "summary": "payments-api"},
        **extra,
    }


def _error(status: int, message: str, errors: list[str] | None = None, headers: dict | None = None) -> Response:
    body = {"error": {"message": message, "code": 2001 if status == 400 else 2020, "errors": errors or []}}
    return Response(json.dumps(body), status=status, content_type="application/json", headers=headers or {})


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclass
class FakePagerDuty:
    incidents: list[dict] = field(default_factory=list)
    notes: dict[str, list[dict]] = field(default_factory=dict)
    alerts: dict[str, list[dict]] = field(default_factory=dict)
    throttle: int = 0  # answer this many requests with 429 first
    throttle_reset: str = "1"  # their ratelimit-reset header
    # How to answer the next note POSTs: "500" (nothing stored), "500+stored" (stored, then a 500: an
    # ambiguous outcome), "400"; "503+odd" (`{"error": "down"}`, a body not in PagerDuty's shape) and
    # "502+html" (a proxy's HTML error page): nothing stored. After the list, 201.
    note_failures: list[str] = field(default_factory=list)
    note_delay: float = 0.0  # seconds before a note POST answers (after storing it)
    requests: list[tuple[float, str, str]] = field(default_factory=list)  # (time, method, path)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def install(self, httpserver) -> FakePagerDuty:
        httpserver.expect_request(re.compile(r"^/incidents.*")).respond_with_handler(self.handle)
        return self

    def posted_notes(self, incident_id: str) -> list[dict]:
        return [n for n in self.notes.get(incident_id, []) if n.get("posted")]

    def handle(self, request: Request) -> Response:
        with self.lock:
            self.requests.append((time.monotonic(), request.method, request.path))
            if request.headers.get("Authorization") != f"Token token={TOKEN}":
                return _error(401, "Authentication failed")
            if self.throttle:
                self.throttle -= 1
                return _error(
                    429,
                    "Rate Limit Exceeded",
                    headers={
                        "ratelimit-limit": "960",
                        "ratelimit-remaining": "0",
                        "ratelimit-reset": self.throttle_reset,
                    },
                )
        parts = request.path.strip("/").split("/")
        if parts == ["incidents"]:
            return self._list(request)
        incident = next((i for i in self.incidents if i["id"] == parts[1]), None)
        if incident is None:
            return _error(404, "Not Found")
        if len(parts) == 2:
            return self._json({"incident": incident})
        if parts[2] == "alerts":
            alerts = sorted(
                self.alerts.get(parts[1], []),
                key=lambda a: a.get("created_at", ""),
                reverse=request.args.get("sort_by") == "created_at:desc",
            )
            if request.args.get("sort_by") not in ("created_at:asc", "created_at"):
                alerts = list(reversed(alerts))  # unsorted: newest first, so "first in the list" is not the oldest
            return self._json({"alerts": alerts[: int(request.args.get("limit", 25))]})
        if parts[2] == "notes" and request.method == "GET":
            return self._json(
                {"notes": [{k: v for k, v in n.items() if k != "posted"} for n in self.notes.get(parts[1], [])]}
            )
        if parts[2] == "notes" and request.method == "POST":
            return self._post_note(parts[1], request)
        return _error(404, "Not Found")

    def _post_note(self, incident_id: str, request: Request) -> Response:
        content = json.loads(request.get_data())["note"]["content"]
        with self.lock:
            outcome = self.note_failures.pop(0) if self.note_failures else "201"
        status = int(outcome.split("+")[0])
        if outcome.endswith("+odd"):
            return Response(json.dumps({"error": "down"}), status=status, content_type="application/json")
        if outcome.endswith("+html"):
            return Response(
                "<html><body><h1>502 Bad Gateway</h1>nginx</body></html>", status=status, content_type="text/html"
            )
        if status == 201 or outcome.endswith("+stored"):
            self.notes.setdefault(incident_id, []).append(
                {
                    "id": f"N{len(self.notes.get(incident_id, []))}",
                    "content": content,
                    "created_at": "2026-11-29T03:40:00Z",
                    "posted": True,
                }
            )
        if self.note_delay:
            time.sleep(self.note_delay)
        if status != 201:
            return _error(status, "Internal Server Error" if status >= 500 else "Invalid Input Provided")
        return self._json({"note": {"id": "N1", "content": content}}, status=201)

    def _list(self, request: Request) -> Response:
        args = request.args
        since, until = _time(args["since"]), _time(args["until"])
        if until - since > SIX_MONTHS:
            return _error(400, "Invalid Input Provided", ["Date range cannot be larger than 6 months"])
        offset, limit = int(args.get("offset", 0)), int(args.get("limit", 25))
        if offset + limit > 10_000:
            return _error(400, "Invalid Input Provided", ["Offset must be less than 10000"])
        statuses = args.getlist("statuses[]") or ["triggered", "acknowledged", "resolved"]
        services = args.getlist("service_ids[]")
        matching = [
            i
            for i in self.incidents
            if since <= _time(i["created_at"]) < until
            and i["status"] in statuses
            and (not services or i["service"]["id"] in services)
        ]
        page = matching[offset : offset + limit]
        body: dict[str, Any] = {
            "incidents": page,
            "limit": limit,
            "offset": offset,
            "more": offset + limit < len(matching),
            "total": len(matching) if args.get("total") == "true" else None,
        }
        return self._json(body)

    @staticmethod
    def _json(body: dict, status: int = 200) -> Response:
        return Response(json.dumps(body), status=status, content_type="application/json")
