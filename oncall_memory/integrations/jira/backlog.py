"""Jira Service Management (Jira Cloud REST v3) as an incident source: `ingest --source jira`.

Reads `GET /rest/api/3/search/jql` (the enhanced search), paged by `nextPageToken` until `isLast` (the
last page leaves the token out), with the fields named below, then each issue's comments beyond the
ones the search returned (`GET /rest/api/3/issue/{key}/comment`, paged by `startAt`). Descriptions and
comments are Atlassian Document Format, read through `adf` and the post-mortem section reader.

Field mapping (Jira -> Incident):
    id, url                  <- key (source "jira"), {ONCALL_MEMORY_JIRA_URL}/browse/{key}
    title                    <- summary
    status, severity         <- status.name, priority.name
    opened_at, resolved_at   <- created, resolutiondate
    service, component_tags  <- the first component; the other components and the labels
    root_cause, error_signature, oncall_note
                             <- the description's post-mortem sections (Root cause, Symptoms, Summary,
                                Resolution, ...); a description without them is the error signature
    fixes_attempted          <- the resolution comment (the last one made by the time the issue was
                                resolved) as the fix that resolved it; "Fix: <action> => <outcome>" lines
    oncall_note (more)       <- the other comments, oldest first; "Root cause:" lines go to root_cause
The window is on `updated`, so a comment added after resolution arrives with the next run.
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
from ...sources.vendor_api import VendorAPI, require
from .adf import to_markdown

FIELDS = (
    "summary,description,status,priority,created,resolution,resolutiondate,updated,components,labels,comment,issuetype"
)
# Jira Service Management's incident work type is "[System] Incident" on current sites; name yours with
# ONCALL_MEMORY_JIRA_JQL when it differs. Resolved ones only: an open incident has no fix to tell.
DEFAULT_JQL = 'issuetype = "[System] Incident" AND resolution IS NOT EMPTY'
PAGE = 100
FIRST_DAY = dt.datetime(2009, 1, 1, tzinfo=dt.timezone.utc)  # the enhanced search wants a bounded query
# JQL dates are read in the account's own time zone, which we do not know: a window reaches a day further
# back (ingest is idempotent, so the overlap is free).
TZ_SLACK = dt.timedelta(days=1)


class JiraAPI(VendorAPI):
    """Jira Cloud with an Atlassian account's email and API token (basic auth, as Atlassian documents)."""

    @classmethod
    def from_settings(cls, settings: Any) -> JiraAPI:
        jira = settings.jira
        require(jira, "jira", "url", "email", "token", why="an Atlassian account and its API token")
        return cls(jira.url, jira.email, jira.token, max_retries=jira.max_retries, backoff=jira.backoff)

    def __init__(self, url: str, email: str, token: SecretStr, **kwargs: Any):
        super().__init__(
            "Jira",
            url,
            settings_hint="ONCALL_MEMORY_JIRA_EMAIL and ONCALL_MEMORY_JIRA_TOKEN (an API token of that account)",
            auth=(email, token.get_secret_value()),
            **kwargs,
        )

    def search(self, jql: str) -> Iterator[dict[str, Any]]:
        """Every issue `jql` finds, page by page."""
        params: dict[str, Any] = {"jql": jql, "fields": FIELDS, "maxResults": PAGE}
        while True:
            page = self.get("/rest/api/3/search/jql", params).json()
            issues = page.get("issues") if isinstance(page, dict) else None
            if not isinstance(issues, list):
                return
            yield from (i for i in issues if isinstance(i, dict))
            token = page.get("nextPageToken")
            if page.get("isLast", token is None) or not token or not issues:
                return
            params = {**params, "nextPageToken": token}

    def issue(self, key: str) -> dict[str, Any]:
        """One issue with the fields a source reads (its first comments among them)."""
        body = self.get(f"/rest/api/3/issue/{quote(key, safe='')}", {"fields": FIELDS}).json()
        return body if isinstance(body, dict) else {}

    def comments(self, key: str, start: int) -> Iterator[dict[str, Any]]:
        """An issue's comments from `start` on (the search returns only the first ones)."""
        while True:
            page = self.get(
                f"/rest/api/3/issue/{quote(key, safe='')}/comment",
                {"startAt": start, "maxResults": PAGE, "orderBy": "created"},
            ).json()
            found = page.get("comments") if isinstance(page, dict) else None
            if not isinstance(found, list) or not found:
                return
            yield from (c for c in found if isinstance(c, dict))
            start += len(found)
            if start >= int(page.get("total") or 0):
                return


class JiraSource(Source):
    name = "jira"

    def __init__(self, api: JiraAPI, jql: str | None = None):
        self._api = api
        self._jql = jql or DEFAULT_JQL

    @classmethod
    def from_settings(cls, settings: Any) -> JiraSource:
        return cls(JiraAPI.from_settings(settings), settings.jira.jql)

    def close(self) -> None:
        self._api.close()

    def query(self, window: Window | None) -> str:
        since = (window.since - TZ_SLACK) if window else FIRST_DAY
        bounds = f'updated >= "{since:%Y-%m-%d %H:%M}"'
        if window:
            bounds += f' AND updated < "{window.until + TZ_SLACK:%Y-%m-%d %H:%M}"'
        return f"({self._jql}) AND {bounds} ORDER BY updated ASC"

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        for issue in self._api.search(self.query(window)):
            key = str(issue.get("key") or issue.get("id") or "?")
            try:
                yield to_incident(issue, all_comments(self._api, issue), self._api.base_url)
            except ValidationError as exc:
                yield Rejected(f"jira issue {key}", validation_message(exc))


def all_comments(api: JiraAPI, issue: dict[str, Any]) -> list[dict[str, Any]]:
    """An issue's comments: the first ones it came with, then the rest from the comment endpoint."""
    field = (issue.get("fields") or {}).get("comment") or {}
    found = field.get("comments")
    comments = [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []
    total = field.get("total")
    if isinstance(total, int) and total > len(comments):
        comments += list(api.comments(str(issue.get("key") or ""), len(comments)))
    return comments


def to_incident(issue: dict[str, Any], comments: list[dict[str, Any]], base_url: str) -> Incident:
    """One Jira issue and its comments as an `Incident` (see the module doc)."""
    f = issue.get("fields") or {}
    key = str(issue.get("key") or issue.get("id") or "")
    components = [str(c.get("name")) for c in f.get("components") or [] if isinstance(c, dict) and c.get("name")]
    labels = [str(label) for label in f.get("labels") or [] if isinstance(label, str)]
    fields: dict[str, Any] = {
        "id": key,
        "source": "jira",
        "title": f.get("summary") or key,
        "url": f"{base_url}/browse/{quote(key, safe='')}",
        "status": _name(f.get("status")),
        "severity": _name(f.get("priority")),
        "opened_at": moment(f.get("created")),
        "resolved_at": moment(f.get("resolutiondate")),
        "service": components[0] if components else None,
        "component_tags": components[1:] + labels,
        **described(to_markdown(f.get("description"))),
    }
    story = read_comments(
        [Comment(moment(c.get("created")), to_markdown(c.get("body"))) for c in comments], fields["resolved_at"]
    )
    return Incident.model_validate({k: v for k, v in add_story(fields, story).items() if v not in (None, "")})


def _name(value: Any) -> str | None:
    return str(value.get("name")) if isinstance(value, dict) and value.get("name") else None
