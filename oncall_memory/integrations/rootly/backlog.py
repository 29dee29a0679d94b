"""Rootly as an incident source: `ingest --source rootly`.

Reads `GET /v1/incidents` (JSON:API, `Accept: application/vnd.api+json`, a Bearer API key) with
`filter[updated_at][gte]` / `[lte]` for the window, `sort=updated_at`, `include=services`,
`page[size]=100` and `page[number]`, following `links.next` (else `meta.next_page`) until a page has
neither. Only incidents whose status is resolved or closed are kept (cancelled, in-triage and open ones are
passed over), checked here as well as asked of the API. Errors come as JSON:API's `errors` list.

Field mapping (Rootly -> Incident):
    id, url                  <- sequential_id as "INC-<n>" (else id) (source "rootly"), url
    title                    <- title
    root_cause, error_signature, oncall_note
                             <- summary (Markdown) through the post-mortem section reader; else the
                                error signature
    fixes_attempted          <- mitigation_message (mitigated, at mitigated_at), resolution_message (the
                                fix that resolved it; "Fix: ... => ..." and "Root cause:" lines read as in
                                comments)
    service                  <- the first service (relationships resolved against `included`, or an
                                attribute list of services)
    severity, status         <- severity (its name, or its slug), status
    opened_at, resolved_at   <- started_at (else created_at), resolved_at (else closed_at)
    component_tags           <- labels (key:value pairs as "key:value")
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import SecretStr, ValidationError

from ...domain.incident import Incident
from ...domain.rejected import Rejected, validation_message
from ...sources import Source, Window, moment
from ...sources.comments import Comment, add_story, read_comments
from ...sources.sections import described
from ...sources.vendor_api import VendorAPI, require

PAGE = 100
DONE = frozenset({"resolved", "closed"})  # the statuses that carry what fixed it


class RootlyAPI(VendorAPI):
    def __init__(self, url: str, token: SecretStr, **kwargs: Any):
        super().__init__(
            "Rootly",
            url,
            settings_hint="ONCALL_MEMORY_ROOTLY_TOKEN (an API key that can read incidents)",
            headers={"Authorization": f"Bearer {token.get_secret_value()}", "Accept": "application/vnd.api+json"},
            **kwargs,
        )

    def pages(self, path: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Each JSON:API document of a listing, following `links.next`, else `meta.next_page`."""
        url: str = path
        query: dict[str, Any] | None = {**params, "page[size]": PAGE, "page[number]": 1}
        while True:
            body = self.get(url, query).json()
            if not isinstance(body, dict) or not isinstance(body.get("data"), list):
                return
            yield body
            links, meta = _dict(body.get("links")), _dict(body.get("meta"))
            following, number = links.get("next"), meta.get("next_page")
            if not body["data"]:
                return
            if isinstance(following, str) and following:
                url, query = following, None
            elif isinstance(number, int) and query is not None and number > query["page[number]"]:
                query = {**query, "page[number]": number}
            else:
                return


class RootlySource(Source):
    name = "rootly"

    def __init__(self, api: RootlyAPI):
        self._api = api

    @classmethod
    def from_settings(cls, settings: Any) -> RootlySource:
        rootly = settings.rootly
        require(rootly, "rootly", "token", why="a Rootly API key")
        return cls(RootlyAPI(rootly.url, rootly.token, max_retries=rootly.max_retries, backoff=rootly.backoff))

    def close(self) -> None:
        self._api.close()

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        params: dict[str, Any] = {"sort": "updated_at", "include": "services"}
        if window is not None:
            params["filter[updated_at][gte]"] = window.since.strftime("%Y-%m-%dT%H:%M:%SZ")
            params["filter[updated_at][lte]"] = window.until.strftime("%Y-%m-%dT%H:%M:%SZ")
        for page in self._api.pages("/v1/incidents", params):
            included = {
                (item.get("type"), item.get("id")): item
                for item in page.get("included") or []
                if isinstance(item, dict)
            }
            for resource in page["data"]:
                if not isinstance(resource, dict):
                    continue
                attributes = _dict(resource.get("attributes"))
                if str(attributes.get("status") or "").lower() not in DONE:
                    continue
                updated = moment(attributes.get("updated_at"))
                if window is not None and updated is not None and not (window.since <= updated < window.until):
                    continue
                try:
                    yield to_incident(resource, included)
                except ValidationError as exc:
                    yield Rejected(f"rootly incident {resource.get('id')}", validation_message(exc))


def to_incident(resource: dict[str, Any], included: dict[tuple[Any, Any], dict[str, Any]]) -> Incident:
    a = _dict(resource.get("attributes"))
    sequential = a.get("sequential_id")
    ident = f"INC-{sequential}" if isinstance(sequential, int) else str(resource.get("id") or "")
    resolved_at = moment(a.get("resolved_at")) or moment(a.get("closed_at"))
    fields: dict[str, Any] = {
        "id": ident,
        "source": "rootly",
        "title": a.get("title") or ident,
        "url": a.get("url"),
        "service": _first_service(resource, included),
        "severity": _name(a.get("severity")),
        "status": str(a.get("status") or "") or None,
        "opened_at": moment(a.get("started_at")) or moment(a.get("created_at")),
        "resolved_at": resolved_at,
        "component_tags": _labels(a.get("labels")),
        **described(str(a.get("summary") or "")),
    }
    mitigation = str(a.get("mitigation_message") or "").strip()
    if mitigation:
        when = moment(a.get("mitigated_at"))
        fix: dict[str, Any] = {"action": mitigation[:500], "outcome": "mitigated"}
        fields["fixes_attempted"] = [*(fields.get("fixes_attempted") or []), fix | ({"at": when} if when else {})]
    resolution = str(a.get("resolution_message") or "").strip()
    story = read_comments([Comment(resolved_at, resolution)] if resolution else [], resolved_at)
    return Incident.model_validate({k: v for k, v in add_story(fields, story).items() if v not in (None, "", [])})


def _name(value: Any) -> str | None:
    """A severity as Rootly gives it: a name, an object with one, or a JSON:API `{"data": {...}}` wrapper."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        inner = _dict(value.get("data")) or value
        attributes = _dict(inner.get("attributes")) or inner
        for key in ("name", "slug", "severity"):
            if isinstance(attributes.get(key), str) and attributes[key]:
                return str(attributes[key])
    return None


def _first_service(resource: dict[str, Any], included: dict[tuple[Any, Any], dict[str, Any]]) -> str | None:
    refs = _dict(_dict(resource.get("relationships")).get("services")).get("data")
    for ref in refs if isinstance(refs, list) else []:
        if isinstance(ref, dict) and (found := included.get((ref.get("type"), ref.get("id")))):
            if name := _name(found):
                return name
    services = _dict(resource.get("attributes")).get("services")
    for service in services if isinstance(services, list) else []:
        if name := _name(service):
            return name
    return None


def _labels(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [f"{k}:{v}" if v not in (None, "") else str(k) for k, v in value.items()][:20]
    if isinstance(value, list):
        return [str(item) for item in value if isinstance(item, str | int) and str(item)][:20]
    return []


def _dict(value: Any) -> dict[str, Any]:
    """`value` when it is an object, else an empty one: a vendor's body is read, never trusted."""
    return value if isinstance(value, dict) else {}
