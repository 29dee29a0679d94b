"""Jira Cloud, ServiceNow and GitHub played by pytest-httpserver, keeping to each vendor's published shapes:

- Jira REST v3 enhanced search (`/rest/api/3/search/jql`): basic auth (email + API token), a bounded JQL
  or 400, only `id` unless `fields` names more, `nextPageToken` left out of the last page (JRACLOUD-92184)
  with `isLast: true`; the `comment` field holds the first comments and their `total`; the rest from
  `/rest/api/3/issue/{key}/comment` (`startAt`, `maxResults`, `total`); 429 with `Retry-After`;
  descriptions and comment bodies in Atlassian Document Format.
- ServiceNow Table API (`/api/now/table/incident`): basic auth, `{"result": [...]}`, each field
  `{"value", "display_value"}` under `sysparm_display_value=all`, a `Link` header with first/prev/next/last.
- GitHub REST (`/repos/{o}/{r}/issues`): pull requests in the listing, `since` on `updated_at`, `Link`
  pagination by `page`, comments per issue, 403 with `x-ratelimit-remaining: 0` and `x-ratelimit-reset`.
- GitLab REST v4 (`/projects/{id}/issues`): `PRIVATE-TOKEN`, the project's path URL-encoded as one segment,
  `issue_type`, `labels` (all of them), `updated_after`, `order_by`/`sort`, offset pagination with
  `x-page`/`x-next-page` and a `Link` header (prev, next, first, last), notes per issue with system notes
  among them; 429 with `Retry-After` and `RateLimit-Reset` as a Unix time.
- Rootly (`/v1/incidents`, JSON:API): Bearer key, `filter[updated_at][gte|lte]`, `sort`, `include=services`
  (services sideloaded in `included`, referenced from `relationships`), `page[number]`/`page[size]` with
  `links.next` left out of the last page and `meta.next_page` null there; errors as `{"errors": [...]}`;
  429 with `Retry-After`.
"""

from __future__ import annotations

import base64
import json
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlencode

from werkzeug import Request, Response


def _json(body, status: int = 200, headers: dict | None = None) -> Response:
    return Response(json.dumps(body), status=status, content_type="application/json", headers=headers or {})


def _basic(request: Request) -> tuple[str, str] | None:
    header = request.headers.get("Authorization", "")
    if not header.startswith("Basic "):
        return None
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return user, password


def adf(*blocks) -> dict:
    """An ADF document: strings are paragraphs, ("h2", text) headings, ("ul", [items]) bullet lists,
    ("code", text) code blocks."""
    content = []
    for block in blocks:
        if isinstance(block, str):
            content.append({"type": "paragraph", "content": [{"type": "text", "text": block}]})
        elif block[0].startswith("h"):
            level = int(block[0][1])
            content.append(
                {"type": "heading", "attrs": {"level": level}, "content": [{"type": "text", "text": block[1]}]}
            )
        elif block[0] == "ul":
            items = [
                {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": t}]}]}
                for t in block[1]
            ]
            content.append({"type": "bulletList", "content": items})
        elif block[0] == "code":
            content.append({"type": "codeBlock", "attrs": {}, "content": [{"type": "text", "text": block[1]}]})
    return {"type": "doc", "version": 1, "content": content}


@dataclass
class FakeJira:
    email: str = "sre@example.com"
    token: str = "jira-api-token-xyz"
    issues: list[dict] = field(default_factory=list)
    comments: dict[str, list[dict]] = field(default_factory=dict)
    page: int = 2  # issues per page, whatever maxResults asks (Jira may return fewer)
    comments_in_search: int = 2
    throttle: int = 0
    down_for: str | None = None  # answer 500 to searches whose JQL holds this (a slice that fails)
    queries: list[str] = field(default_factory=list)
    requests: list[tuple[float, str]] = field(default_factory=list)

    def install(self, httpserver) -> FakeJira:
        httpserver.expect_request("/rest/api/3/search/jql", method="GET").respond_with_handler(self._search)
        for issue in self.issues:
            httpserver.expect_request(f"/rest/api/3/issue/{issue['key']}", method="GET").respond_with_handler(
                lambda request, key=issue["key"]: self._issue(request, key)
            )
        for key in self.comments:
            httpserver.expect_request(f"/rest/api/3/issue/{key}/comment", method="GET").respond_with_handler(
                self._comment_page(key)
            )
        return self

    def _auth(self, request: Request) -> Response | None:
        self.requests.append((time.monotonic(), request.path))
        if _basic(request) != (self.email, self.token):
            return _json({"errorMessages": ["Client must be authenticated to access this resource."]}, 401)
        if self.throttle:
            self.throttle -= 1
            return _json({"errorMessages": ["Rate limit exceeded."]}, 429, {"Retry-After": "1"})
        return None

    def _search(self, request: Request) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        jql = request.args.get("jql", "")
        if "updated >=" not in jql and "created >=" not in jql:
            return _json({"errorMessages": ["Unbounded JQL queries are not allowed here."]}, 400)
        self.queries.append(jql)
        if self.down_for and self.down_for in jql:
            return _json({"errorMessages": ["Internal server error"]}, 500)
        wanted = (request.args.get("fields") or "id").split(",")
        start = int(request.args.get("nextPageToken") or 0)
        matching = [i for i in self.issues if _in_jql_window(i["fields"]["updated"], jql)]
        chunk = matching[start : start + self.page]
        issues = []
        for issue in chunk:
            fields = {k: v for k, v in issue["fields"].items() if k in wanted}
            if "comment" in wanted:
                all_comments = self.comments.get(issue["key"], [])
                fields["comment"] = {
                    "comments": all_comments[: self.comments_in_search],
                    "maxResults": self.comments_in_search,
                    "total": len(all_comments),
                    "startAt": 0,
                }
            issues.append(
                {"id": issue["id"], "key": issue["key"], "self": "https://x/rest/api/3/issue/1", "fields": fields}
            )
        body: dict = {"issues": issues, "isLast": start + self.page >= len(matching)}
        if not body["isLast"]:
            body["nextPageToken"] = str(start + self.page)
        return _json(body)

    def _shown(self, issue: dict, wanted: list[str]) -> dict:
        fields = {k: v for k, v in issue["fields"].items() if k in wanted}
        if "comment" in wanted:
            found = self.comments.get(issue["key"], [])
            fields["comment"] = {
                "comments": found[: self.comments_in_search],
                "maxResults": self.comments_in_search,
                "total": len(found),
                "startAt": 0,
            }
        return {"id": issue["id"], "key": issue["key"], "self": "https://x/rest/api/3/issue/1", "fields": fields}

    def _issue(self, request: Request, key: str) -> Response:
        if (refused := self._auth(request)) is not None:
            return refused
        (issue,) = [i for i in self.issues if i["key"] == key]
        return _json(self._shown(issue, (request.args.get("fields") or "*all").split(",")))

    def _comment_page(self, key: str):
        def handler(request: Request) -> Response:
            if (refused := self._auth(request)) is not None:
                return refused
            start, size = int(request.args.get("startAt", 0)), min(int(request.args.get("maxResults", 50)), 2)
            found = self.comments[key]
            return _json(
                {"startAt": start, "maxResults": size, "total": len(found), "comments": found[start : start + size]}
            )

        return handler


def _in_jql_window(updated: str, jql: str) -> bool:
    """The `updated >= "yyyy-MM-dd HH:mm"` / `updated < ...` bounds of a JQL query (read as UTC here)."""
    stamp = datetime.fromisoformat(re.sub(r"([+-]\d{2})(\d{2})$", r"\1:\2", updated)).strftime("%Y-%m-%d %H:%M")
    low = re.search(r'updated >= "([^"]+)"', jql)
    high = re.search(r'updated < "([^"]+)"', jql)
    return (low is None or stamp >= low[1]) and (high is None or stamp < high[1])


def jira_issue(
    n: int, summary: str, description: dict, *, resolved: str = "2025-05-01T10:30:00.000+0000", **more
) -> dict:
    return {
        "id": str(10000 + n),
        "key": f"OPS-{n}",
        "fields": {
            "summary": summary,
            "description": description,
            "status": {"name": "Resolved", "statusCategory": {"key": "done"}},
            "resolution": {"id": "10000", "name": "Done"},
            "priority": {"name": "High"},
            "created": "2025-05-01T09:00:00.000+0000",
            "resolutiondate": resolved,
            "updated": resolved,
            "components": [{"name": "checkout"}, {"name": "kubernetes"}],
            "labels": ["sev2"],
            "issuetype": {"name": "[System] Incident"},
            **more,
        },
    }


def jira_comment(n: int, created: str, *blocks) -> dict:
    return {"id": str(n), "author": {"displayName": "On-call"}, "body": adf(*blocks), "created": created}


@dataclass
class FakeServiceNow:
    user: str = "svc-oncall"
    password: str = "sn-password-123"
    rows: list[dict] = field(default_factory=list)
    fail_once: bool = False
    max_limit: int = 2  # rows per page, whatever sysparm_limit asks (an instance's own cap)
    queries: list[str] = field(default_factory=list)

    def install(self, httpserver) -> FakeServiceNow:
        self._base = httpserver.url_for("/api/now/table/incident")
        httpserver.expect_request("/api/now/table/incident", method="GET").respond_with_handler(self._table)
        return self

    def _table(self, request: Request) -> Response:
        if _basic(request) != (self.user, self.password):
            return _json(
                {
                    "error": {"message": "User Not Authenticated", "detail": "Required to provide Auth information"},
                    "status": "failure",
                },
                401,
            )
        if self.fail_once:
            self.fail_once = False
            return Response("<html>Service Unavailable</html>", status=503, content_type="text/html")
        query = request.args.get("sysparm_query", "")
        self.queries.append(query)
        limit = min(int(request.args.get("sysparm_limit", 10000)), self.max_limit)
        offset = int(request.args.get("sysparm_offset", 0))
        low = re.search(r"sys_updated_on>=([^^]+)", query)
        high = re.search(r"sys_updated_on<([^^]+)", query)
        matching = [
            r
            for r in self.rows
            if (low is None or r["sys_updated_on"] >= low[1]) and (high is None or r["sys_updated_on"] < high[1])
        ]
        fields = request.args.get("sysparm_fields")
        rows = [
            {k: v for k, v in r.items() if fields is None or k in fields.split(",")}
            for r in matching[offset : offset + limit]
        ]
        if request.args.get("sysparm_display_value") == "all":
            rows = [
                {k: (v if isinstance(v, dict) else {"value": v, "display_value": v}) for k, v in r.items()}
                for r in rows
            ]
        args = dict(request.args)

        def link(at: int, rel: str) -> str:
            return f'<{self._base}?{urlencode({**args, "sysparm_offset": at})}>;rel="{rel}"'

        links = [link(0, "first")]
        if offset + limit < len(matching):
            links.append(link(offset + limit, "next"))
        links.append(link(max(0, len(matching) - limit), "last"))
        return _json({"result": rows}, headers={"Link": ",".join(links), "X-Total-Count": str(len(matching))})


@dataclass
class FakeGitHub:
    repo: str = "acme/ops"
    token: str = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    issues: list[dict] = field(default_factory=list)
    comments: dict[int, list[dict]] = field(default_factory=dict)
    page: int = 2
    rate_limited_once: bool = False
    asked: list[dict] = field(default_factory=list)

    def install(self, httpserver) -> FakeGitHub:
        self._url = httpserver.url_for(f"/repos/{self.repo}/issues")
        httpserver.expect_request(f"/repos/{self.repo}/issues", method="GET").respond_with_handler(self._issues)
        for number in self.comments:
            httpserver.expect_request(f"/repos/{self.repo}/issues/{number}/comments").respond_with_handler(
                lambda request, n=number: _json(self.comments[n])
            )
        return self

    def _issues(self, request: Request) -> Response:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return _json({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}, 401)
        if self.rate_limited_once:
            self.rate_limited_once = False
            reset = str(int(time.time()) + 1)
            return _json(
                {"message": "API rate limit exceeded"}, 403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}
            )
        self.asked.append(dict(request.args))
        wanted = set(filter(None, request.args.get("labels", "").split(",")))
        since = request.args.get("since")
        found = [
            i
            for i in sorted(self.issues, key=lambda i: i["updated_at"])
            if i["state"] == request.args.get("state", "open")
            and wanted <= {label["name"] for label in i["labels"]}
            and (since is None or i["updated_at"] >= since)
        ]
        page = int(request.args.get("page", 1))
        size = min(int(request.args.get("per_page", 30)), self.page)
        chunk = found[(page - 1) * size : page * size]
        headers = {}
        if page * size < len(found):
            args = {**dict(request.args), "page": page + 1}
            headers["Link"] = f'<{self._url}?{urlencode(args)}>; rel="next", <{self._url}?page=9>; rel="last"'
        return _json(chunk, headers=headers)


def gh_issue(number: int, title: str, body: str, *, updated: str, labels=("incident",), pull=False, **more) -> dict:
    issue = {
        "number": number,
        "title": title,
        "body": body,
        "state": "closed",
        "state_reason": "completed",
        "labels": [{"name": name} for name in labels],
        "created_at": "2025-04-01T08:00:00Z",
        "closed_at": "2025-04-01T09:00:00Z",
        "updated_at": updated,
        "html_url": f"https://github.com/acme/ops/issues/{number}",
        "comments": 0,
        **more,
    }
    if pull:
        issue["pull_request"] = {"url": "https://api.github.com/repos/acme/ops/pulls/1"}
    return issue


@dataclass
class FakeIncidentIo:
    """incident.io's v2 API: Bearer key, `pagination_meta.after` cursors (left out of the last page),
    `status_category[one_of]` and `created_at[gte|lte]` filters, incident updates per incident, 429 with
    `Retry-After`."""

    key: str = "inc-io-api-key-0123456789"
    incidents: list[dict] = field(default_factory=list)
    updates: dict[str, list[dict]] = field(default_factory=dict)
    page: int = 2
    throttle: int = 0
    asked: list[dict] = field(default_factory=list)

    def install(self, httpserver) -> FakeIncidentIo:
        httpserver.expect_request("/v2/incidents", method="GET").respond_with_handler(self._incidents)
        httpserver.expect_request("/v2/incident_updates", method="GET").respond_with_handler(self._updates)
        httpserver.expect_request(re.compile(r"^/v2/incidents/[^/]+$"), method="GET").respond_with_handler(self._one)
        return self

    def _one(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        wanted = request.path.rsplit("/", 1)[1]
        for incident in self.incidents:
            if incident["id"] == wanted:
                return _json({"incident": incident})
        return _json({"type": "not_found", "status": 404, "errors": [{"code": "not_found"}]}, 404)

    def _refused(self, request: Request) -> Response | None:
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return _json(
                {
                    "type": "authentication_error",
                    "status": 401,
                    "errors": [{"code": "unauthorized", "message": "Unauthorized"}],
                },
                401,
            )
        if self.throttle:
            self.throttle -= 1
            return _json({"type": "rate_limit", "status": 429}, 429, {"Retry-After": "2"})
        return None

    def _paged(self, request: Request, key: str, items: list[dict]) -> Response:
        size = min(int(request.args.get("page_size", 25)), self.page)
        start = int(request.args.get("after") or 0)
        chunk = items[start : start + size]
        meta: dict = {"page_size": size, "total_record_count": len(items)}
        if start + size < len(items):
            meta["after"] = str(start + size)
        return _json({key: chunk, "pagination_meta": meta})

    def _incidents(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        self.asked.append(dict(request.args))
        category = request.args.get("status_category[one_of]")
        low, high = request.args.get("created_at[gte]"), request.args.get("created_at[lte]")
        found = [
            i
            for i in self.incidents
            if (category is None or i["incident_status"]["category"] == category)
            and (low is None or i["created_at"][:10] >= low)
            and (high is None or i["created_at"][:10] <= high)
        ]
        return self._paged(request, "incidents", found)

    def _updates(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        return self._paged(request, "incident_updates", self.updates.get(request.args.get("incident_id", ""), []))


def io_incident(
    n: int, name: str, summary: str, *, created: str = "2025-02-10T12:00:00Z", category: str = "closed"
) -> dict:
    return {
        "id": f"01HXYZ{n:04d}",
        "reference": f"INC-{n}",
        "name": name,
        "summary": summary,
        "permalink": f"https://app.incident.io/acme/incidents/{n}",
        "created_at": created,
        "updated_at": created.replace("12:00", "15:00"),
        "incident_status": {"category": category, "name": "Closed" if category == "closed" else "Investigating"},
        "severity": {"name": "Major"},
        "custom_field_entries": [
            {"custom_field": {"name": "Affected services"}, "values": [{"value_catalog_entry": {"name": "search-api"}}]}
        ],
        "incident_timestamp_values": [
            {"incident_timestamp": {"name": "Resolved at"}, "value": {"value": created.replace("12:00", "13:30")}}
        ],
    }


@dataclass
class FakeGitLab:
    project: str = "acme/ops"
    project_id: int = 42
    token: str = "glpat-" + "Ab3dE5gH7jK9mN1pQ3sT"
    issues: list[dict] = field(default_factory=list)
    notes: dict[int, list[dict]] = field(default_factory=dict)
    page: int = 2
    rate_limited_once: bool = False
    asked: list[dict] = field(default_factory=list)
    raw_paths: list[str] = field(default_factory=list)

    def install(self, httpserver) -> FakeGitLab:
        # The WSGI server hands over the path decoded: `acme%2Fops` arrives as `acme/ops`; the raw one is kept.
        self._url = httpserver.url_for(f"/projects/{self.project.replace('/', '%2F')}/issues")
        httpserver.expect_request(f"/projects/{self.project}/issues", method="GET").respond_with_handler(self._issues)
        # Each issue and its notes, by the project's path and by its numeric id (as a webhook names it).
        for where in (self.project, str(self.project_id)):
            for issue in self.issues:
                iid = issue["iid"]
                httpserver.expect_request(f"/projects/{where}/issues/{iid}").respond_with_handler(
                    lambda request, i=issue: _json(i) if self._authorised(request) else _json({}, 401)
                )
                httpserver.expect_request(f"/projects/{where}/issues/{iid}/notes").respond_with_handler(
                    lambda request, n=iid: self._notes(request, n)
                )
        return self

    def _authorised(self, request: Request) -> bool:
        self.raw_paths.append(request.environ.get("REQUEST_URI") or request.environ.get("RAW_URI") or "")
        return request.headers.get("PRIVATE-TOKEN") == self.token

    def _notes(self, request: Request, iid: int) -> Response:
        if not self._authorised(request):
            return _json({"message": "401 Unauthorized"}, 401)
        return _json(self.notes.get(iid, []), headers={"x-page": "1", "x-total-pages": "1"})

    def _issues(self, request: Request) -> Response:
        if not self._authorised(request):
            return _json({"message": "401 Unauthorized"}, 401)
        if self.rate_limited_once:
            self.rate_limited_once = False
            headers = {"Retry-After": "1", "RateLimit-Reset": str(int(time.time()) + 1), "RateLimit-Remaining": "0"}
            return _json({"message": "Retry later"}, 429, headers)
        self.asked.append(dict(request.args))
        wanted = set(filter(None, request.args.get("labels", "").split(",")))
        after = request.args.get("updated_after")
        kind = request.args.get("issue_type")
        reverse = request.args.get("sort", "desc") == "desc"
        found = [
            i
            for i in sorted(self.issues, key=lambda i: i[request.args.get("order_by", "created_at")], reverse=reverse)
            if request.args.get("state", "all") in ("all", i["state"])
            and (kind is None or i["issue_type"] == kind)
            and wanted <= set(i["labels"])
            and (after is None or i["updated_at"] >= after)
        ]
        page = int(request.args.get("page", 1))
        size = min(int(request.args.get("per_page", 20)), self.page)
        chunk = found[(page - 1) * size : page * size]
        last = max(1, -(-len(found) // size))
        link = lambda n, rel: f'<{self._url}?{urlencode({**dict(request.args), "page": n})}>; rel="{rel}"'  # noqa: E731
        links = [link(page - 1, "prev")] if page > 1 else []
        headers = {"x-page": str(page), "x-per-page": str(size), "x-next-page": ""}
        if page < last:
            links.append(link(page + 1, "next"))
            headers["x-next-page"] = str(page + 1)
        headers["Link"] = ", ".join([*links, link(1, "first"), link(last, "last")])
        return _json(chunk, headers=headers)


def gl_issue(iid: int, title: str, description: str, *, updated: str, labels=(), issue_type="incident", **more) -> dict:
    return {
        "id": 9000 + iid,
        "iid": iid,
        "project_id": 42,
        "title": title,
        "description": description,
        "state": "closed",
        "labels": list(labels),
        "issue_type": issue_type,
        "type": issue_type.upper(),
        "severity": "UNKNOWN",
        "created_at": "2025-04-01T08:00:00.000Z",
        "closed_at": "2025-04-01T09:00:00.000Z",
        "updated_at": updated,
        "web_url": f"https://gitlab.example.com/acme/ops/-/issues/{iid}",
        "references": {"short": f"#{iid}", "relative": f"#{iid}", "full": f"acme/ops#{iid}"},
        "user_notes_count": 0,
        **more,
    }


@dataclass
class FakeRootly:
    token: str = "rootly_" + "0123456789abcdef0123456789abcdef0123456789abcdef"
    incidents: list[dict] = field(default_factory=list)
    services: dict[str, str] = field(default_factory=dict)  # id -> name
    page: int = 2
    rate_limited_once: bool = False
    asked: list[dict] = field(default_factory=list)

    def install(self, httpserver) -> FakeRootly:
        self._url = httpserver.url_for("/v1/incidents")
        httpserver.expect_request("/v1/incidents", method="GET").respond_with_handler(self._incidents)
        return self

    def _incidents(self, request: Request) -> Response:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return _json({"errors": [{"title": "Unauthorized", "status": "401", "detail": "Invalid API key"}]}, 401)
        if self.rate_limited_once:
            self.rate_limited_once = False
            return _json({"errors": [{"title": "Too Many Requests", "status": "429"}]}, 429, {"Retry-After": "2"})
        self.asked.append(dict(request.args))
        gte, lte = request.args.get("filter[updated_at][gte]"), request.args.get("filter[updated_at][lte]")
        found = [
            i
            for i in sorted(self.incidents, key=lambda i: i["attributes"]["updated_at"])
            if (gte is None or i["attributes"]["updated_at"] >= gte)
            and (lte is None or i["attributes"]["updated_at"] <= lte)
        ]
        number, size = int(request.args.get("page[number]", 1)), min(int(request.args.get("page[size]", 20)), self.page)
        chunk = found[(number - 1) * size : number * size]
        pages = max(1, -(-len(found) // size))
        link = lambda n: f"{self._url}?{urlencode({**dict(request.args), 'page[number]': n})}"  # noqa: E731
        links = {
            "self": link(number),
            "first": link(1),
            "prev": link(number - 1) if number > 1 else None,
            "last": link(pages),
        }
        if number < pages:
            links["next"] = link(number + 1)
        meta = {
            "current_page": number,
            "next_page": number + 1 if number < pages else None,
            "prev_page": number - 1 if number > 1 else None,
            "total_count": len(found),
            "total_pages": pages,
        }
        body: dict = {"data": chunk, "links": links, "meta": meta}
        if "services" in request.args.get("include", "").split(","):
            wanted = {r["id"] for i in chunk for r in i.get("relationships", {}).get("services", {}).get("data", [])}
            body["included"] = [
                {"id": sid, "type": "services", "attributes": {"name": self.services[sid], "slug": sid}}
                for sid in sorted(wanted)
            ]
        return Response(json.dumps(body), status=200, content_type="application/vnd.api+json")


def rootly_incident(n: int, title: str, *, updated: str, status: str = "resolved", services=(), **attributes) -> dict:
    return {
        "id": f"7c0f{n:04d}-aaaa-bbbb-cccc-1234567890ab",
        "type": "incidents",
        "attributes": {
            "title": title,
            "slug": title.lower().replace(" ", "-"),
            "sequential_id": n,
            "summary": None,
            "status": status,
            "url": f"https://rootly.com/account/incidents/{n}",
            "started_at": "2025-04-01T08:00:00.000-07:00",
            "created_at": "2025-04-01T08:01:00.000-07:00",
            "mitigated_at": None,
            "resolved_at": "2025-04-01T09:00:00.000-07:00" if status in ("resolved", "closed") else None,
            "updated_at": updated,
            "mitigation_message": None,
            "resolution_message": None,
            "labels": {},
            **attributes,
        },
        "relationships": {"services": {"data": [{"id": s, "type": "services"} for s in services]}},
    }
