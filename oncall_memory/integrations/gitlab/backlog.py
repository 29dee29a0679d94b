"""GitLab incidents (issues of type incident, or issues carrying labels) as an incident source:
`ingest --source gitlab`.

Reads `GET /projects/{id}/issues` (API v4) with `state=closed`, `issue_type` (ONCALL_MEMORY_GITLAB_ISSUE_TYPE,
default "incident": GitLab's own incident issues; blank for any type), `labels` (ONCALL_MEMORY_GITLAB_LABELS,
comma-separated, all required; default none), `updated_after` (the window's start), `order_by=updated_at`,
`sort=asc` and `per_page=100`, following the `Link: <...>; rel="next"` header (offset pagination; GitLab
leaves `x-total` out on large projects, so the link is what is followed), and stopping at the window's end.
Each issue's comments come from `GET /projects/{id}/issues/{iid}/notes` (`sort=asc`), paged the same way;
system notes ("closed", "changed the label") are passed over. The project is its numeric id or its path
(`group/subgroup/project`, sent URL-encoded as GitLab asks).

Field mapping (GitLab -> Incident):
    id, url                  <- "group/project#iid" (source "gitlab"), web_url
    title                    <- title
    root_cause, error_signature, oncall_note
                             <- the description's post-mortem sections (GitLab's incident template included);
                                a description without them is the error signature
    fixes_attempted          <- the closing comment; "Fix: <action> => <outcome>" lines; "Root cause:" lines
    oncall_note (more)       <- the other comments, oldest first
    severity                 <- severity (incidents: critical, high, medium, low; "UNKNOWN" is none)
    status                   <- "resolved" (closed)
    opened_at, resolved_at   <- created_at, closed_at
    component_tags           <- the labels other than the ones asked for (scoped labels kept whole: "service::api")
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from pydantic import SecretStr, ValidationError

from ...domain.incident import Incident
from ...domain.rejected import Rejected, validation_message
from ...errors import InvalidInput
from ...sources import Source, Window, moment
from ...sources.comments import Comment, add_story, read_comments
from ...sources.sections import described
from ...sources.vendor_api import VendorAPI, require

# A numeric id, or a namespace path: letters, digits, "_", "-", "." in segments, no "..", no empty segment.
_PROJECT = re.compile(r"\d+|[\w.-]+(/[\w.-]+)+")


class GitLabAPI(VendorAPI):
    def __init__(self, url: str, token: SecretStr | None, **kwargs: Any):
        headers = {"PRIVATE-TOKEN": token.get_secret_value()} if token is not None else {}
        super().__init__(
            "GitLab",
            url,
            settings_hint="ONCALL_MEMORY_GITLAB_TOKEN (a token with read_api) and ONCALL_MEMORY_GITLAB_PROJECT",
            headers=headers,
            **kwargs,
        )


class GitLabSource(Source):
    name = "gitlab"

    def __init__(self, api: GitLabAPI, project: str, issue_type: str = "incident", labels: str = ""):
        project = project.strip().strip("/")
        if not _PROJECT.fullmatch(project) or ".." in project:
            raise InvalidInput(
                f"ONCALL_MEMORY_GITLAB_PROJECT must be the project's numeric id or its path (group/project), "
                f"not {project!r}"
            )
        self._api = api
        self.project = project
        self.issue_type = issue_type.strip()
        self.labels = asked_labels(labels)
        # The path's "/" are part of one path segment: GitLab wants them as %2F.
        self._base = project_path(project)

    @classmethod
    def from_settings(cls, settings: Any) -> GitLabSource:
        gl = settings.gitlab
        require(gl, "gitlab", "project", why="the project's id or group/project path")
        return cls(api_from(settings), gl.project, gl.issue_type, gl.labels)

    def close(self) -> None:
        self._api.close()

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        params: dict[str, Any] = {"state": "closed", "order_by": "updated_at", "sort": "asc"}
        if self.issue_type:
            params["issue_type"] = self.issue_type
        if self.labels:
            params["labels"] = self.labels
        if window is not None:
            params["updated_after"] = window.since.strftime("%Y-%m-%dT%H:%M:%SZ")
        for issue in self._api.updated_until(f"{self._base}/issues", params, window.until if window else None):
            yield self._incident(issue)

    def _incident(self, issue: dict[str, Any]) -> Incident | Rejected:
        try:
            return read_issue(self._api, self._base, issue, self.project, self.labels)
        except ValidationError as exc:
            return Rejected(f"gitlab issue {issue_reference(issue, self.project)}", validation_message(exc))


def api_from(settings: Any) -> GitLabAPI:
    gl = settings.gitlab
    return GitLabAPI(gl.url, gl.token, max_retries=gl.max_retries, backoff=gl.backoff)


def asked_labels(labels: str) -> str:
    """The labels setting as GitLab's `labels` parameter wants it: comma-separated, blanks dropped."""
    return ",".join(label.strip() for label in labels.split(",") if label.strip())


def project_path(project: str) -> str:
    """The API path of a project given by its id or its `group/project` path (whose "/" GitLab wants as %2F)."""
    return f"/projects/{quote(project, safe='')}"


def issue_reference(issue: dict[str, Any], project: str) -> str:
    """GitLab's full reference ("group/project#12"): the issue named the same way from any API path."""
    references = issue.get("references")
    full = references.get("full") if isinstance(references, dict) else None
    return full if isinstance(full, str) and "#" in full else f"{project}#{issue.get('iid')}"


def read_issue(api: GitLabAPI, base: str, issue: dict[str, Any], project: str, labels: str) -> Incident:
    """An issue of the project at `base` as an incident, with its comments (system notes passed over).
    Raises pydantic's `ValidationError` when it cannot be one."""
    iid = issue.get("iid")
    notes: list[dict[str, Any]] = []
    if isinstance(iid, int) and issue.get("user_notes_count") != 0:
        for page in api.linked_pages(f"{base}/issues/{iid}/notes", {"sort": "asc", "order_by": "created_at"}):
            notes += [note for note in page if not note.get("system")]
    return to_incident(issue, notes, issue_reference(issue, project), labels.split(","))


def wanted(issue: dict[str, Any], issue_type: str, labels: str) -> bool:
    """Is the issue one the source reads: of the type asked (if any), carrying every label asked?"""
    if issue_type and str(issue.get("issue_type") or "").lower() != issue_type.lower():
        return False
    carried = {str(label.get("name") if isinstance(label, dict) else label) for label in issue.get("labels") or []}
    return {label for label in labels.split(",") if label} <= carried


def to_incident(issue: dict[str, Any], notes: list[dict[str, Any]], shown: str, asked: list[str]) -> Incident:
    labels = [str(label.get("name") if isinstance(label, dict) else label) for label in issue.get("labels") or []]
    severity = issue.get("severity")
    fields: dict[str, Any] = {
        "id": shown,
        "source": "gitlab",
        "title": issue.get("title") or shown,
        "url": issue.get("web_url"),
        "status": "resolved" if issue.get("state") == "closed" else issue.get("state"),
        "severity": str(severity).lower() if isinstance(severity, str) and severity.upper() != "UNKNOWN" else None,
        "opened_at": moment(issue.get("created_at")),
        "resolved_at": moment(issue.get("closed_at")),
        "component_tags": [label for label in labels if label and label not in asked],
        **described(str(issue.get("description") or "")),
    }
    story = read_comments(
        [Comment(moment(n.get("created_at")), str(n.get("body") or "")) for n in notes], fields["resolved_at"]
    )
    return Incident.model_validate({k: v for k, v in add_story(fields, story).items() if v not in (None, "")})
