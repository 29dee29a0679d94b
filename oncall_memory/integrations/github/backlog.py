"""GitHub issues labelled as incidents as an incident source: `ingest --source github`.

Reads `GET /repos/{owner}/{repo}/issues` with `state=closed`, `labels` (ONCALL_MEMORY_GITHUB_LABELS,
default "incident"), `since` (the window's start: GitHub filters on `updated_at`), `sort=updated`,
`direction=asc` and `per_page=100`, following the `Link: <...>; rel="next"` header; pull requests (which
the endpoint also lists) are passed over, and paging stops at the window's end. Each issue's comments
come from `GET /repos/{owner}/{repo}/issues/{number}/comments`, paged the same way.

Field mapping (GitHub -> Incident):
    id, url                  <- "owner/repo#number" (source "github"), html_url
    title                    <- title
    root_cause, error_signature, oncall_note
                             <- the body's post-mortem sections (Markdown, read as a post-mortem); a body
                                without them is the error signature
    fixes_attempted          <- the closing comment (the last one made by the time the issue was closed);
                                "Fix: <action> => <outcome>" lines; "Root cause:" lines go to root_cause
    oncall_note (more)       <- the other comments, oldest first
    status                   <- "resolved" when closed as completed, else its state_reason (not_planned)
    opened_at, resolved_at   <- created_at, closed_at
    component_tags           <- the labels other than the ones asked for
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pydantic import SecretStr, ValidationError

from ...domain.incident import Incident
from ...domain.rejected import Rejected, validation_message
from ...errors import InvalidInput
from ...sources import Source, Window, moment
from ...sources.comments import Comment, add_story, read_comments
from ...sources.sections import described
from ...sources.vendor_api import VendorAPI, require


class GitHubAPI(VendorAPI):
    def __init__(self, url: str, token: SecretStr | None, **kwargs: Any):
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token.get_secret_value()}"
        super().__init__(
            "GitHub",
            url,
            settings_hint="ONCALL_MEMORY_GITHUB_TOKEN (Issues: read on the repository) and ONCALL_MEMORY_GITHUB_REPO",
            headers=headers,
            **kwargs,
        )


class GitHubSource(Source):
    name = "github"

    def __init__(self, api: GitHubAPI, repo: str, labels: str = "incident"):
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo) or ".." in repo:
            raise InvalidInput(f"ONCALL_MEMORY_GITHUB_REPO must be owner/name, not {repo!r}")
        self._api = api
        self.repo = repo
        self.labels = ",".join(label.strip() for label in labels.split(",") if label.strip())

    @classmethod
    def from_settings(cls, settings: Any) -> GitHubSource:
        gh = settings.github
        require(gh, "github", "repo", why="owner/name")
        api = GitHubAPI(gh.url, gh.token, max_retries=gh.max_retries, backoff=gh.backoff)
        return cls(api, gh.repo, gh.labels)

    def close(self) -> None:
        self._api.close()

    def incidents(self, window: Window | None) -> Iterator[Incident | Rejected]:
        params: dict[str, Any] = {"state": "closed", "sort": "updated", "direction": "asc"}
        if self.labels:
            params["labels"] = self.labels
        if window is not None:
            params["since"] = window.since.strftime("%Y-%m-%dT%H:%M:%SZ")
        for issue in self._api.updated_until(f"/repos/{self.repo}/issues", params, window.until if window else None):
            if "pull_request" not in issue:
                yield self._incident(issue)

    def _incident(self, issue: dict[str, Any]) -> Incident | Rejected:
        number = issue.get("number")
        comments: list[dict[str, Any]] = []
        if isinstance(issue.get("comments"), int) and issue["comments"] > 0 and number is not None:
            for page in self._api.linked_pages(f"/repos/{self.repo}/issues/{int(number)}/comments", {}):
                comments += page
        try:
            return to_incident(issue, comments, self.repo, self.labels.split(","))
        except ValidationError as exc:
            return Rejected(f"github issue {self.repo}#{number}", validation_message(exc))


def to_incident(issue: dict[str, Any], comments: list[dict[str, Any]], repo: str, asked: list[str]) -> Incident:
    labels = [
        str(label.get("name") if isinstance(label, dict) else label)
        for label in issue.get("labels") or []
        if (label.get("name") if isinstance(label, dict) else label)
    ]
    reason = issue.get("state_reason")
    fields: dict[str, Any] = {
        "id": f"{repo}#{issue.get('number')}",
        "source": "github",
        "title": issue.get("title") or f"{repo}#{issue.get('number')}",
        "url": issue.get("html_url"),
        "status": "resolved" if reason in (None, "completed") else str(reason),
        "opened_at": moment(issue.get("created_at")),
        "resolved_at": moment(issue.get("closed_at")),
        "component_tags": [label for label in labels if label not in asked],
        **described(str(issue.get("body") or "")),
    }
    story = read_comments(
        [Comment(moment(c.get("created_at")), str(c.get("body") or "")) for c in comments], fields["resolved_at"]
    )
    return Incident.model_validate({k: v for k, v in add_story(fields, story).items() if v not in (None, "")})
