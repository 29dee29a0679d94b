"""Jira Service Management, ServiceNow and GitHub issues as sources, each against a fake built from the
vendor's published shapes (tests/tracker_fakes.py): several pages, rate limits, odd bodies, secrets."""

import base64
import hashlib
import hmac
import json
import sys
import textwrap
import time

import pytest
from tracker_fakes import (
    FakeGitHub,
    FakeGitLab,
    FakeJira,
    FakeRootly,
    FakeServiceNow,
    gh_issue,
    gl_issue,
    jira_comment,
    jira_issue,
    rootly_incident,
)

from oncall_memory.cli import main
from oncall_memory.domain.incident import Incident
from oncall_memory.domain.rejected import Rejected
from oncall_memory.errors import InvalidInput, SourceFailed
from oncall_memory.integrations.jira.adf import to_markdown
from oncall_memory.settings import Settings
from oncall_memory.sources import Window
from oncall_memory.sources.factory import make_source

SLACK_TOKEN = "xoxb-" + "1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def slept(monkeypatch):
    """The waits the clients asked for, instead of sleeping them."""
    waits: list[float] = []
    monkeypatch.setattr("oncall_memory.sources.vendor_api.time.sleep", waits.append)
    return waits


def configure(monkeypatch, prefix: str, **values: str) -> None:
    """A source's settings, as the environment gives them (ONCALL_MEMORY_<PREFIX>_<NAME>)."""
    for name, value in values.items():
        monkeypatch.setenv(f"ONCALL_MEMORY_{prefix}_{name.upper()}", value)


def incidents(source, window=None) -> dict[str, Incident]:
    with source:
        items = list(source.incidents(window))
    assert not [i for i in items if isinstance(i, Rejected)], items
    return {i.id: i for i in items}


# -- Jira ---------------------------------------------------------------------------------------------


@pytest.fixture
def jira(httpserver, monkeypatch):
    fake = FakeJira(
        issues=[
            jira_issue(
                1,
                "Checkout pods crash looping after the 4.12 release",
                {
                    "type": "doc",
                    "version": 1,
                    "content": [
                        {"type": "heading", "attrs": {"level": 2}, "content": [{"type": "text", "text": "Root cause"}]},
                        {
                            "type": "paragraph",
                            "content": [
                                {
                                    "type": "text",
                                    "text": "The release reads PAYMENT_GATEWAY_URL, missing from the configmap.",
                                }
                            ],
                        },
                        {"type": "heading", "attrs": {"level": 2}, "content": [{"type": "text", "text": "Symptoms"}]},
                        {"type": "codeBlock", "content": [{"type": "text", "text": "KeyError: 'PAYMENT_GATEWAY_URL'"}]},
                    ],
                },
            ),
            jira_issue(
                2,
                "Disk full on db-1",
                {
                    "type": "doc",
                    "version": 1,
                    "content": [
                        {
                            "type": "paragraph",
                            "content": [
                                {
                                    "type": "text",
                                    "text": "FIRING: NodeFilesystemSpaceFillingUp on db-1 /var/lib/postgresql",
                                }
                            ],
                        }
                    ],
                },
            ),
            jira_issue(3, "Certificate expired on api gateway", None, resolved="2025-05-02T10:00:00.000+0000"),
        ],
        comments={
            "OPS-1": [
                jira_comment(1, "2025-05-01T09:10:00.000+0000", "Restarted the pods, they die again in 2s."),
                jira_comment(
                    2, "2025-05-01T09:20:00.000+0000", f"Paged payments; bot token in the log was {SLACK_TOKEN}"
                ),
                jira_comment(
                    3, "2025-05-01T10:25:00.000+0000", "Added the key to the configmap and rolled the deployment."
                ),
                jira_comment(4, "2025-05-03T08:00:00.000+0000", "Follow-up: add a config schema check to CI."),
            ]
        },
    ).install(httpserver)
    configure(monkeypatch, "JIRA", url=httpserver.url_for("").rstrip("/"), email=fake.email, token=fake.token)
    return fake


def test_jira_reads_every_page_and_the_comments_past_the_search_and_waits_out_a_429(jira, slept):
    jira.throttle = 1
    found = incidents(make_source(Settings(), "jira", None))
    assert sorted(found) == ["OPS-1", "OPS-2", "OPS-3"]  # two pages: the last one had no nextPageToken
    assert slept == [1.0]  # Retry-After: 1, honoured once
    assert all("resolution IS NOT EMPTY" in q and "updated >=" in q for q in jira.queries)

    ops1 = found["OPS-1"]
    assert ops1.source == "jira" and ops1.url.endswith("/browse/OPS-1")
    assert ops1.root_cause == "The release reads PAYMENT_GATEWAY_URL, missing from the configmap."
    assert "KeyError" in ops1.error_signature  # the ADF code block under Symptoms
    assert (ops1.service, ops1.severity, ops1.status) == ("checkout", "High", "Resolved")
    assert sorted(ops1.component_tags) == ["kubernetes", "sev2"]
    # the resolution comment (the last by the time it was resolved) is the fix; it came from the comment
    # endpoint, past the two comments the search returned
    assert [(f.action, f.outcome.value) for f in ops1.fixes_attempted] == [
        ("Added the key to the configmap and rolled the deployment.", "resolved")
    ]
    assert "Restarted the pods" in ops1.oncall_note and "config schema check" in ops1.oncall_note
    assert SLACK_TOKEN not in ops1.model_dump_json()

    assert found["OPS-2"].error_signature.startswith("FIRING: NodeFilesystemSpaceFillingUp")  # no sections: the alert
    assert found["OPS-3"].title == "Certificate expired on api gateway"  # no description at all


def test_jira_backfill_from_the_cli_is_idempotent_and_bounded_by_its_window(jira, capsys):
    code, out, err = run(capsys, "ingest", "--source", "jira", "--since", "2025-01-01", "--json")
    assert code == 0, err
    counts = json.loads(out)
    assert counts["new"] == 3 and counts["rejected"] == 0
    code, out, _ = run(capsys, "ingest", "--source", "jira", "--since", "2025-01-01", "--json")
    assert json.loads(out)["new"] == 0 and json.loads(out)["embedding_calls"] == 0
    code, out, _ = run(capsys, "similar", "checkout pods crash looping configmap key missing", "--json", "--limit", "1")
    assert json.loads(out)[0]["id"] == "OPS-1" and json.loads(out)[0]["url"].endswith("/browse/OPS-1")
    # each 180-day slice asked only for its own span
    assert any('updated >= "2024-12-31 00:00" AND updated < "2025-07-01 00:00"' in q for q in jira.queries)


def test_jira_backfill_stopped_by_an_outage_resumes_after_the_last_complete_slice(jira, capsys, slept, tmp_path):
    jira.down_for = 'updated >= "2025-06-29'  # the second 180-day slice from 2025-01-01
    code, _, err = run(capsys, "ingest", "--source", "jira", "--since", "2025-01-01", "--json")
    assert code == 1 and "failed after 4 retries" in err
    assert (tmp_path / "data" / "backfill-jira.json").exists()
    jira.down_for, jira.queries[:] = None, []
    code, out, _ = run(capsys, "ingest", "--source", "jira", "--since", "2025-01-01", "--json")
    assert code == 0 and json.loads(out)["rejected"] == 0
    assert jira.queries[0].count('updated >= "2025-06-29') == 1  # resumed at the slice that failed
    assert not (tmp_path / "data" / "backfill-jira.json").exists()


def jira_signed(body: dict, secret: str) -> tuple[bytes, dict]:
    import hashlib
    import hmac

    raw = json.dumps(body).encode()
    signature = "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return raw, {"Content-Type": "application/json", "X-Hub-Signature": signature}


def test_a_resolved_jira_issue_is_learnt_from_its_signed_webhook(jira, httpserver, monkeypatch, tmp_path):
    import time

    from local_client import TestClient

    from oncall_memory.service import create_app

    secret = "jira-webhook-secret-1"
    monkeypatch.setenv("ONCALL_MEMORY_JIRA_WEBHOOK_SECRET", secret)
    issue = jira.issues[0]
    resolved = {
        "webhookEvent": "jira:issue_updated",
        "timestamp": 1,
        "issue": issue,
        "changelog": {"items": [{"field": "resolution", "to": "10000", "toString": "Done"}]},
    }
    with TestClient(create_app(Settings())) as client:
        raw, headers = jira_signed(resolved, secret)
        assert (
            client.post("/webhooks/jira", content=raw, headers={**headers, "X-Hub-Signature": "sha256=0"}).status_code
            == 401
        )
        answer = client.post(
            "/webhooks/jira", content=raw, headers={**headers, "X-Atlassian-Webhook-Identifier": "d-1"}
        )
        assert answer.status_code == 202 and answer.json()["accepted"] == 1
        found, started = [], time.monotonic()
        while not found and time.monotonic() - started < 20:
            answer = client.get("/similar", params={"text": "checkout pods crash looping configmap"})
            if answer.status_code == 200:  # before the first incident is learnt, nothing is stored
                found = [n for n in answer.json() if n["id"] == "OPS-1"]
            time.sleep(0.05)
        assert found and found[0]["root_cause"].startswith("The release reads PAYMENT_GATEWAY_URL")
        assert found[0]["fixes_worked"] == ["Added the key to the configmap and rolled the deployment."]
        # the same delivery again is a duplicate; an edit of an open issue is acknowledged and ignored
        again = client.post("/webhooks/jira", content=raw, headers={**headers, "X-Atlassian-Webhook-Identifier": "d-1"})
        assert again.json()["duplicates"] == 1
        open_issue = {**issue, "fields": {**issue["fields"], "resolution": None}}
        raw, headers = jira_signed({"webhookEvent": "jira:issue_updated", "issue": open_issue}, secret)
        assert client.post("/webhooks/jira", content=raw, headers=headers).json()["ignored"] == "jira:issue_updated"


def test_the_jira_webhook_is_off_without_its_secret(jira):
    from local_client import TestClient

    from oncall_memory.service import create_app

    with TestClient(create_app(Settings())) as client:
        raw, headers = jira_signed({"webhookEvent": "jira:issue_updated"}, "anything")
        response = client.post("/webhooks/jira", content=raw, headers=headers)
    assert response.status_code == 404 and "ONCALL_MEMORY_JIRA_WEBHOOK_SECRET" in response.text


def test_jira_wrong_token_names_the_settings_to_fix(jira, capsys, monkeypatch):
    monkeypatch.setenv("ONCALL_MEMORY_JIRA_TOKEN", "wrong")
    code, _, err = run(capsys, "ingest", "--source", "jira")
    assert code == 1
    assert "401" in err and "ONCALL_MEMORY_JIRA_EMAIL and ONCALL_MEMORY_JIRA_TOKEN" in err and "wrong" not in err


def test_jira_missing_settings_are_named(capsys):
    code, _, err = run(capsys, "ingest", "--source", "jira")
    assert code == 2
    assert "ONCALL_MEMORY_JIRA_URL, ONCALL_MEMORY_JIRA_EMAIL, ONCALL_MEMORY_JIRA_TOKEN" in err


def test_adf_nested_deeper_than_python_recursion_is_read_in_linear_time():
    node: dict = {"type": "text", "text": "bottom"}
    for _ in range(5000):
        node = {"type": "blockquote", "content": [node]}
    assert to_markdown({"type": "doc", "content": [node]}) == "bottom"
    doc = {
        "type": "doc",
        "content": [
            {"type": "mention", "attrs": {"text": "@ana"}},
            {"type": "emoji", "attrs": {"shortName": ":fire:"}},
            {"type": "weird", "content": [{"type": "text", "text": " kept"}]},
            {"type": "text"},
            "junk",
            None,
        ],
    }
    assert to_markdown(doc) == "@ana:fire: kept"


# -- ServiceNow ---------------------------------------------------------------------------------------


def sn_row(n: int, updated: str, **fields) -> dict:
    return {
        "sys_id": f"{n:032x}",
        "number": f"INC00100{n:02d}",
        "short_description": f"Incident {n}",
        "state": "Closed",
        "priority": "2 - High",
        "opened_at": "2025-03-01 10:00:00",
        "resolved_at": "2025-03-01 11:30:00",
        "sys_updated_on": updated,
        **fields,
    }


@pytest.fixture
def servicenow(httpserver, monkeypatch):
    fake = FakeServiceNow(
        rows=[
            sn_row(
                1,
                "2025-03-01 11:30:00",
                short_description="Orders API 502s from the load balancer",
                description="ALB target group orders-api: all targets unhealthy, health check timeout",
                close_notes=f"Root cause: health check path moved to /healthz in 3.2\nPointed the target group at /healthz. Old password was hunter2 in {SLACK_TOKEN}",
                business_service={"value": "a1", "display_value": "orders-api"},
                category="network",
            ),
            sn_row(2, "2025-03-02 09:00:00"),
            sn_row(
                3,
                "2025-03-03 09:00:00",
                close_notes="Fix: restart the pods => no-op\nFix: roll back to 3.1 => resolved",
            ),
            sn_row(4, "2025-09-01 09:00:00"),
        ]
    ).install(httpserver)
    configure(monkeypatch, "SERVICENOW", url=httpserver.url_for("").rstrip("/"), user=fake.user, password=fake.password)
    return fake


def test_servicenow_follows_the_link_header_through_every_page_after_a_503(servicenow, slept):
    servicenow.fail_once = True
    found = incidents(make_source(Settings(), "servicenow", None))
    assert sorted(found) == ["INC0010001", "INC0010002", "INC0010003", "INC0010004"]  # two rows a page
    assert len(slept) == 1  # the 503, retried once
    assert all(q.startswith("stateIN6,7") and q.endswith("^ORDERBYsys_updated_on") for q in servicenow.queries)

    first = found["INC0010001"]
    assert (first.service, first.severity, first.status) == ("orders-api", "2 - High", "Closed")
    assert first.root_cause == "health check path moved to /healthz in 3.2"
    assert first.error_signature.startswith("ALB target group orders-api")
    assert first.fixes_attempted[0].action.startswith("Pointed the target group at /healthz")
    assert first.opened_at.isoformat() == "2025-03-01T10:00:00+00:00" and first.resolved_at.hour == 11
    assert "sys_id%3D" in first.url and SLACK_TOKEN not in first.model_dump_json()
    assert [(f.action, f.outcome.value) for f in found["INC0010003"].fixes_attempted] == [
        ("restart the pods", "no-op"),
        ("roll back to 3.1", "resolved"),
    ]


def test_servicenow_window_is_an_encoded_query_in_utc(servicenow):
    from datetime import datetime, timezone

    window = Window(datetime(2025, 3, 2, tzinfo=timezone.utc), datetime(2025, 4, 1, tzinfo=timezone.utc))
    assert sorted(incidents(make_source(Settings(), "servicenow", None), window)) == ["INC0010002", "INC0010003"]
    assert "sys_updated_on>=2025-03-02 00:00:00^sys_updated_on<2025-04-01 00:00:00" in servicenow.queries[-1]


def test_a_next_link_to_another_host_is_not_followed(httpserver, monkeypatch):
    from werkzeug import Response

    httpserver.expect_request("/api/now/table/incident").respond_with_response(
        Response(
            json.dumps({"result": [sn_row(1, "2025-03-01 00:00:00")]}),
            content_type="application/json",
            headers={"Link": '<https://evil.example.com/api/now/table/incident?sysparm_offset=1>;rel="next"'},
        )
    )
    settings = Settings(servicenow_url=httpserver.url_for("").rstrip("/"), servicenow_user="u", servicenow_password="p")
    with make_source(settings, "servicenow", None) as source, pytest.raises(SourceFailed, match="another host"):
        list(source.incidents(None))


# -- GitHub -------------------------------------------------------------------------------------------


POSTMORTEM_BODY = textwrap.dedent(
    """\
    ## Summary
    The docs site served 404s for every page.

    ## Root cause
    The CDN purge job deleted the origin bucket's index objects.

    ## Resolution
    - Re-ran the docs deploy to restore the objects
    """
)


@pytest.fixture
def github(httpserver, monkeypatch):
    fake = FakeGitHub(
        issues=[
            gh_issue(1, "Docs site returns 404 everywhere", POSTMORTEM_BODY, updated="2025-04-02T00:00:00Z"),
            gh_issue(2, "Fix typo", "", updated="2025-04-03T00:00:00Z", pull=True),
            gh_issue(
                3,
                "Queue consumer lag on billing",
                "Alert: KafkaConsumerLagHigh billing-consumer",
                updated="2025-04-04T00:00:00Z",
                comments=2,
                labels=("incident", "billing"),
            ),
            gh_issue(4, "Not an incident", "", updated="2025-04-05T00:00:00Z", labels=("bug",)),
            gh_issue(5, "Duplicate page", "see #3", updated="2025-04-06T00:00:00Z", state_reason="not_planned"),
            gh_issue(6, "Later incident", "Alert: later", updated="2025-08-01T00:00:00Z"),
        ],
        comments={
            3: [
                {"body": "Root cause: a consumer stuck on a poison message", "created_at": "2025-04-01T08:20:00Z"},
                {"body": "Skipped the poison message offset; lag drained.", "created_at": "2025-04-01T08:59:00Z"},
            ]
        },
    ).install(httpserver)
    configure(monkeypatch, "GITHUB", url=httpserver.url_for("").rstrip("/"), repo=fake.repo, token=fake.token)
    return fake


def test_github_issues_with_the_label_over_several_pages_pull_requests_passed_over(github, slept):
    from datetime import datetime, timezone

    github.rate_limited_once = True
    window = Window(datetime(2025, 4, 1, tzinfo=timezone.utc), datetime(2025, 5, 1, tzinfo=timezone.utc))
    found = incidents(make_source(Settings(), "github", None), window)
    assert sorted(found) == ["acme/ops#1", "acme/ops#3", "acme/ops#5"]  # no PR, no unlabelled, none after the window
    assert len(slept) == 1 and 0 < slept[0] <= 2  # until x-ratelimit-reset
    assert github.asked[0]["since"] == "2025-04-01T00:00:00Z" and github.asked[0]["labels"] == "incident"

    docs = found["acme/ops#1"]
    assert docs.root_cause == "The CDN purge job deleted the origin bucket's index objects."
    assert [f.action for f in docs.fixes_attempted] == ["Re-ran the docs deploy to restore the objects"]
    billing = found["acme/ops#3"]
    assert billing.root_cause == "a consumer stuck on a poison message"
    assert billing.fixes_attempted[0].action == "Skipped the poison message offset; lag drained."
    assert billing.component_tags == ["billing"] and billing.error_signature == "KafkaConsumerLagHigh billing-consumer"
    assert found["acme/ops#5"].status == "not_planned"


def test_github_bad_repo_setting_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("ONCALL_MEMORY_GITHUB_REPO", "../../etc")
    with pytest.raises(InvalidInput, match="owner/name"):
        make_source(Settings(), "github", None)


# -- GitLab -------------------------------------------------------------------------------------------


# GitLab's incident template (.gitlab/issue_templates/incident.md in its handbook's form), filled in.
GITLAB_INCIDENT = textwrap.dedent(
    """\
    ## Summary
    Checkout requests time out at the load balancer.

    ## Impact
    Customers could not pay for 40 minutes.

    ## Root Cause Analysis
    The payments connection pool was exhausted after the retry storm.

    ## Mitigation
    - Raised the pool size and restarted payments-api
    """
)


@pytest.fixture
def gitlab(httpserver, monkeypatch):
    token_in_text = "glpat-" + "Zy9xW8vU7tS6rQ5pO4nM"
    fake = FakeGitLab(
        issues=[
            gl_issue(1, "Checkout times out", GITLAB_INCIDENT, updated="2025-04-02T00:00:00.000Z", severity="HIGH"),
            gl_issue(2, "Add a dark mode", "", updated="2025-04-03T00:00:00.000Z", issue_type="issue"),
            gl_issue(
                3,
                "Billing consumer lag",
                f"Alert: KafkaConsumerLagHigh billing-consumer (token {token_in_text} pasted by mistake)",
                updated="2025-04-04T00:00:00.000Z",
                labels=("service::billing", "incident"),
                user_notes_count=2,
            ),
            gl_issue(4, "Open incident", "", updated="2025-04-05T00:00:00.000Z", state="opened", closed_at=None),
            gl_issue(
                5, "Disk full on db-3", "Alert: NodeFilesystemAlmostOutOfSpace", updated="2025-04-06T00:00:00.000Z"
            ),
            gl_issue(6, "Later incident", "Alert: later", updated="2025-08-01T00:00:00.000Z"),
        ],
        notes={
            3: [
                {
                    "id": 1,
                    "body": "changed the incident status to **Triggered**",
                    "system": True,
                    "created_at": "2025-04-01T08:05:00.000Z",
                },
                {
                    "id": 2,
                    "body": "Root cause: a consumer stuck on a poison message",
                    "system": False,
                    "created_at": "2025-04-01T08:20:00.000Z",
                },
                {
                    "id": 3,
                    "body": "Skipped the poison message offset; lag drained.",
                    "system": False,
                    "created_at": "2025-04-01T08:59:00.000Z",
                },
                {"id": 4, "body": "closed", "system": True, "created_at": "2025-04-01T09:00:00.000Z"},
            ]
        },
    ).install(httpserver)
    configure(monkeypatch, "GITLAB", url=httpserver.url_for("").rstrip("/"), project=fake.project, token=fake.token)
    return fake


def test_gitlab_incidents_over_several_pages_issues_and_open_ones_passed_over(gitlab, slept):
    from datetime import datetime, timezone

    gitlab.rate_limited_once = True
    window = Window(datetime(2025, 4, 1, tzinfo=timezone.utc), datetime(2025, 5, 1, tzinfo=timezone.utc))
    found = incidents(make_source(Settings(), "gitlab", None), window)
    # Incidents only, closed only, none after the window; three pages of two.
    assert sorted(found) == ["acme/ops#1", "acme/ops#3", "acme/ops#5"]
    assert len(gitlab.asked) >= 2 and {a.get("page", "1") for a in gitlab.asked} >= {"1", "2"}
    first = gitlab.asked[0]
    assert first["issue_type"] == "incident" and first["state"] == "closed" and "labels" not in first
    assert first["updated_after"] == "2025-04-01T00:00:00Z" and (first["order_by"], first["sort"]) == (
        "updated_at",
        "asc",
    )
    # The project's path travels as one segment, as GitLab asks; the 429's Unix-time reset is not read as a
    # wait of decades (`Retry-After: 1`, or the reset a second away).
    assert all("/projects/acme%2Fops/" in raw for raw in gitlab.raw_paths if raw), gitlab.raw_paths
    assert len(slept) == 1 and 0 <= slept[0] <= 2

    checkout = found["acme/ops#1"]
    assert checkout.root_cause == "The payments connection pool was exhausted after the retry storm."
    assert [f.action for f in checkout.fixes_attempted] == ["Raised the pool size and restarted payments-api"]
    assert checkout.severity == "high" and checkout.status == "resolved"
    assert checkout.url == "https://gitlab.example.com/acme/ops/-/issues/1"
    billing = found["acme/ops#3"]
    assert billing.root_cause == "a consumer stuck on a poison message"  # system notes passed over
    assert billing.fixes_attempted[0].action == "Skipped the poison message offset; lag drained."
    assert billing.component_tags == ["service::billing", "incident"]
    assert "glpat-" not in billing.model_dump_json() and "Zy9xW8" not in billing.model_dump_json()
    assert found["acme/ops#5"].severity is None  # GitLab's UNKNOWN is no severity


def test_gitlab_labels_instead_of_the_incident_type(gitlab, monkeypatch, slept):
    configure(monkeypatch, "GITLAB", issue_type="", labels="service::billing")
    found = incidents(make_source(Settings(), "gitlab", None))
    assert sorted(found) == ["acme/ops#3"]
    assert "issue_type" not in gitlab.asked[0] and gitlab.asked[0]["labels"] == "service::billing"
    assert found["acme/ops#3"].component_tags == ["incident"]


def test_gitlab_ingest_through_the_cli_and_a_wrong_token_names_the_settings(gitlab, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ONCALL_MEMORY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ONCALL_MEMORY_EMBEDDER", "fake")
    code, out, err = run(capsys, "ingest", "--source", "gitlab")
    assert code == 0, err
    assert out.startswith("4 new, 0 updated, 0 unchanged, 0 rejected"), out  # #1, #3, #5 and the later #6
    monkeypatch.setenv("ONCALL_MEMORY_GITLAB_TOKEN", "glpat-" + "wrongwrongwrongwrong")
    code, out, err = run(capsys, "ingest", "--source", "gitlab")
    assert code != 0
    assert "ONCALL_MEMORY_GITLAB_TOKEN" in err and "Traceback" not in err and "wrongwrong" not in err


def gitlab_issue_event(issue: dict, action: str) -> dict:
    """An Issue Hook body as GitLab posts it (the fields this reads, and some it does not)."""
    return {
        "object_kind": "issue",
        "event_type": "issue",
        "user": {"id": 1, "name": "Ada", "username": "ada"},
        "project": {
            "id": 42,
            "name": "ops",
            "path_with_namespace": "acme/ops",
            "web_url": "https://gitlab.example.com/acme/ops",
        },
        "object_attributes": {
            "id": issue["id"],
            "iid": issue["iid"],
            "title": issue["title"],
            "state": issue["state"],
            "action": action,
            "updated_at": "2025-04-04 00:00:00 UTC",
            "type": "Incident",
        },
        "labels": [{"id": 7, "title": label} for label in issue["labels"]],
    }


def test_a_closed_gitlab_incident_is_learnt_from_its_webhook(gitlab, monkeypatch):
    import time

    from local_client import TestClient

    from oncall_memory.service import create_app

    secret = "gitlab-webhook-token-1"
    monkeypatch.setenv("ONCALL_MEMORY_GITLAB_WEBHOOK_SECRET", secret)
    billing = next(i for i in gitlab.issues if i["iid"] == 3)
    body = gitlab_issue_event(billing, "close")
    with TestClient(create_app(Settings())) as client:
        wrong = client.post("/webhooks/gitlab", json=body, headers={"X-Gitlab-Token": "not-it"})
        assert wrong.status_code == 401 and "not-it" not in wrong.text
        headers = {"X-Gitlab-Token": secret, "X-Gitlab-Event": "Issue Hook", "X-Gitlab-Event-UUID": "e-1"}
        answer = client.post("/webhooks/gitlab", json=body, headers=headers)
        assert answer.status_code == 202 and answer.json()["accepted"] == 1
        found, started = [], time.monotonic()
        while not found and time.monotonic() - started < 20:
            answer = client.get("/similar", params={"text": "kafka consumer lag billing poison message"})
            if answer.status_code == 200:
                found = [n for n in answer.json() if n["id"] == "acme/ops#3"]
            time.sleep(0.05)
        assert found and found[0]["root_cause"] == "a consumer stuck on a poison message"
        assert found[0]["fixes_worked"] == ["Skipped the poison message offset; lag drained."]
        # the same delivery again is a duplicate; an issue reopened is acknowledged and ignored
        assert client.post("/webhooks/gitlab", json=body, headers=headers).json()["duplicates"] == 1
        reopened = gitlab_issue_event({**billing, "state": "opened"}, "reopen")
        assert client.post("/webhooks/gitlab", json=reopened, headers=headers).json()["ignored"] == "issue:reopen"
        assert (
            client.post(
                "/webhooks/gitlab", json={"object_kind": "issue", "project": {"id": "x"}}, headers=headers
            ).status_code
            == 422
        )


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"[]",
        b"\xff\xfe",
        b'{"object_kind": 5}',
        b'{"object_kind": "issue", "project": {"id": 1}, "object_attributes": {"iid": 1e400, "state": "closed"}}',
        b'{"object_kind": "issue", "project": {"id": -1}, "object_attributes": {"iid": 1, "state": "closed", "action": "close"}}',
        b'{"object_kind": "note", "object_attributes": "x"}',
        b'{"object_kind": "' + b"k" * 100_000 + b'"}',
    ],
)
def test_odd_gitlab_webhook_bodies_get_a_4xx_or_are_ignored(gitlab, monkeypatch, body):
    from local_client import TestClient

    from oncall_memory.service import create_app

    monkeypatch.setenv("ONCALL_MEMORY_GITLAB_WEBHOOK_SECRET", "s")
    with TestClient(create_app(Settings())) as client:
        answer = client.post(
            "/webhooks/gitlab", content=body, headers={"X-Gitlab-Token": "s", "Content-Type": "application/json"}
        )
    assert answer.status_code in (202, 400, 413, 415, 422), answer.text
    if answer.status_code == 202:
        assert answer.json()["accepted"] == 0 and len(answer.text) < 300


def test_the_gitlab_token_is_checked_before_the_body_is_read(gitlab, monkeypatch):
    """Issue 53: on the hook, GitLab's secret token (a header) is checked before the body is read: a wrong
    token with a body over the limit is a 401, not a 413; the right one meets the limit."""
    from local_client import TestClient

    from oncall_memory.service import create_app

    monkeypatch.setenv("ONCALL_MEMORY_GITLAB_WEBHOOK_SECRET", "s")
    big = json.dumps({"object_kind": "issue", "pad": "x" * 10_000}).encode()
    as_json = {"Content-Type": "application/json"}
    with TestClient(create_app(Settings(max_body_bytes=4096))) as client:
        wrong = client.post("/webhooks/gitlab", content=big, headers={**as_json, "X-Gitlab-Token": "guess"})
        assert wrong.status_code == 401 and "X-Gitlab-Token" in wrong.text
        assert "www-authenticate" not in wrong.headers  # a shared secret in a header, not a bearer token
        right = client.post("/webhooks/gitlab", content=big, headers={**as_json, "X-Gitlab-Token": "s"})
        assert right.status_code == 413


def test_the_gitlab_webhook_is_off_without_its_secret(gitlab):
    from local_client import TestClient

    from oncall_memory.service import create_app

    with TestClient(create_app(Settings())) as client:
        response = client.post("/webhooks/gitlab", json={"object_kind": "issue"}, headers={"X-Gitlab-Token": "x"})
    assert response.status_code == 404 and "ONCALL_MEMORY_GITLAB_WEBHOOK_SECRET" in response.text


def test_the_gitlab_learner_leaves_out_what_the_source_would_not_read(gitlab):
    from oncall_memory.integrations.gitlab.learner import GitLabLearner

    # Reading back needs no memory: `read` is what `send` would ingest.
    learner = GitLabLearner.from_settings(Settings(), memory=None)  # type: ignore[arg-type]
    with learner._api:
        assert learner.read("42#2") is None  # a plain issue, not an incident
        assert learner.read("42#4") is None  # still open
        assert learner.read("42#3").id == "acme/ops#3"


@pytest.mark.parametrize("project", ["../../etc", "acme/../ops", "", "acme//ops", "https://gitlab.com/acme/ops"])
def test_gitlab_bad_project_setting_is_a_clear_error(monkeypatch, project):
    monkeypatch.setenv("ONCALL_MEMORY_GITLAB_PROJECT", project)
    with pytest.raises(InvalidInput, match="ONCALL_MEMORY_GITLAB_PROJECT"):
        make_source(Settings(), "gitlab", None)


# -- Rootly -------------------------------------------------------------------------------------------


@pytest.fixture
def rootly(httpserver, monkeypatch):
    fake = FakeRootly(
        services={"svc-payments": "payments-api"},
        incidents=[
            rootly_incident(
                41,
                "Checkout 502s after deploy",
                updated="2025-04-02T00:00:00.000Z",
                services=("svc-payments",),
                severity={"data": {"id": "sev1", "type": "severities", "attributes": {"name": "SEV1", "slug": "sev1"}}},
                summary="## Root cause\nA bad config flag disabled the payments connection pool.\n",
                mitigation_message="Rolled back payments-api to the previous release",
                mitigated_at="2025-04-01T08:30:00.000-07:00",
                resolution_message="Fix: reverted the config flag => resolved",
                labels={"team": "checkout", "platform": ""},
            ),
            rootly_incident(42, "Paging test", updated="2025-04-03T00:00:00.000Z", status="cancelled"),
            rootly_incident(43, "Still burning", updated="2025-04-04T00:00:00.000Z", status="started"),
            rootly_incident(
                44,
                "Redis evictions spike",
                updated="2025-04-05T00:00:00.000Z",
                status="closed",
                summary="Alert: RedisEvictionsHigh cache-main (password hunter2hunter2 in the URL redis://app:"
                + "S3cr3tPassw0rd@cache-main:6379)",
                severity="high",
            ),
            rootly_incident(45, "Later one", updated="2025-08-01T00:00:00.000Z"),
        ],
    ).install(httpserver)
    configure(monkeypatch, "ROOTLY", url=httpserver.url_for("").rstrip("/"), token=fake.token)
    return fake


def test_rootly_resolved_incidents_over_several_pages(rootly, slept):
    from datetime import datetime, timezone

    rootly.rate_limited_once = True
    window = Window(datetime(2025, 4, 1, tzinfo=timezone.utc), datetime(2025, 5, 1, tzinfo=timezone.utc))
    found = incidents(make_source(Settings(), "rootly", None), window)
    assert sorted(found) == ["INC-41", "INC-44"]  # cancelled, open and later ones passed over
    assert [a["page[number]"] for a in rootly.asked] == ["1", "2"]  # four in the window, two a page
    assert rootly.asked[0]["filter[updated_at][gte]"] == "2025-04-01T00:00:00Z" and slept == [2.0]

    checkout = found["INC-41"]
    assert checkout.service == "payments-api" and checkout.severity == "SEV1"
    assert checkout.root_cause == "A bad config flag disabled the payments connection pool."
    assert [(f.action, f.outcome.value) for f in checkout.fixes_attempted] == [
        ("Rolled back payments-api to the previous release", "mitigated"),
        ("reverted the config flag", "resolved"),
    ]
    assert checkout.fixes_attempted[0].at is not None
    assert checkout.component_tags == ["team:checkout", "platform"]
    assert checkout.url == "https://rootly.com/account/incidents/41"
    redis = found["INC-44"]
    assert redis.severity == "high" and redis.status == "closed"
    assert "S3cr3tPassw0rd" not in redis.model_dump_json()


def test_rootly_without_a_key_or_with_a_wrong_one_says_what_to_set(rootly, monkeypatch):
    monkeypatch.delenv("ONCALL_MEMORY_ROOTLY_TOKEN")
    with pytest.raises(InvalidInput, match="ONCALL_MEMORY_ROOTLY_TOKEN"):
        make_source(Settings(), "rootly", None)
    monkeypatch.setenv("ONCALL_MEMORY_ROOTLY_TOKEN", "rootly_" + "f" * 48)
    with make_source(Settings(), "rootly", None) as source, pytest.raises(SourceFailed) as failed:
        list(source.incidents(None))
    assert "ONCALL_MEMORY_ROOTLY_TOKEN" in str(failed.value) and "Invalid API key" in str(failed.value)


def test_rootly_odd_bodies_are_passed_over_not_a_traceback(httpserver, monkeypatch):
    odd = {
        "data": [
            None,
            "x",
            {"id": "n1", "attributes": "not an object"},
            {"id": "n2", "attributes": {"status": "resolved"}},
        ],
        "links": "nope",
        "meta": None,
        "included": [None],
    }
    httpserver.expect_request("/v1/incidents").respond_with_json(odd)
    configure(monkeypatch, "ROOTLY", url=httpserver.url_for("").rstrip("/"), token="rootly_" + "a" * 48)
    with make_source(Settings(), "rootly", None) as source:
        items = list(source.incidents(None))
    # The one resolved incident without a title is kept under its id; the rest are not incidents.
    assert [i.id for i in items if isinstance(i, Incident)] == ["n2"]


# -- plugins ------------------------------------------------------------------------------------------


PLUGIN = '''
"""A tiny third-party source: one incident per line of a text file."""
from oncall_memory.domain.incident import Incident
from oncall_memory.sources import Source


class LinesSource(Source):
    name = "opsnotes"

    def __init__(self, path):
        self.path = path

    def incidents(self, window):
        for number, line in enumerate(open(self.path).read().splitlines(), start=1):
            yield Incident(id=f"note-{number}", title=line, source="opsnotes")


def source(settings, path):
    return LinesSource(path)
'''


def test_a_source_installed_as_a_package_is_found_through_its_entry_point(tmp_path, monkeypatch, capsys):
    site = tmp_path / "site"
    (site / "oncall_memory_opsnotes").mkdir(parents=True)
    (site / "oncall_memory_opsnotes" / "__init__.py").write_text(PLUGIN)
    dist = site / "oncall_memory_opsnotes-0.1.dist-info"  # what pip writes when it installs a package
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: oncall-memory-opsnotes\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[oncall_memory.integrations]\nopsnotes = oncall_memory_opsnotes:source\n")
    monkeypatch.syspath_prepend(str(site))
    notes = tmp_path / "notes.txt"
    notes.write_text("redis evicting keys under memory pressure\nkafka broker disk full\n")

    code, out, err = run(capsys, "ingest", "--source", "opsnotes", str(notes), "--json")
    assert code == 0, err
    assert json.loads(out)["new"] == 2
    code, out, _ = run(capsys, "similar", "kafka broker disk full", "--json", "--limit", "1")
    assert json.loads(out)[0]["id"] == "note-2"
    sys.modules.pop("oncall_memory_opsnotes", None)


def test_an_unknown_source_lists_the_ones_there_are(capsys):
    code, _, err = run(capsys, "ingest", "--source", "nope")
    assert code == 2 and "unknown source 'nope'" in err and "jira, servicenow, github" in err


# -- incident.io --------------------------------------------------------------------------------------


def test_incident_io_pages_by_cursor_reads_updates_and_waits_out_a_429(httpserver, monkeypatch, slept):
    from datetime import datetime, timezone

    from tracker_fakes import FakeIncidentIo, io_incident

    fake = FakeIncidentIo(
        incidents=[
            io_incident(1, "Search latency through the roof", "## Root cause\nA cold index after the reindex job.\n"),
            io_incident(2, "Login errors", "Alert: AuthErrorRateHigh on auth-api"),
            io_incident(3, "Still open", "", category="live"),
            io_incident(4, "Queue backlog", "backlog", created="2025-02-11T12:00:00Z"),
        ],
        updates={
            "01HXYZ0001": [
                {"message": "Warming the index by replaying yesterday's queries", "created_at": "2025-02-10T12:40:00Z"},
                {
                    "message": f"Latency back to normal after the warm-up; key was {SLACK_TOKEN}",
                    "created_at": "2025-02-10T13:25:00Z",
                },
                {"message": "Post-incident review scheduled", "created_at": "2025-02-12T09:00:00Z"},
            ]
        },
        throttle=1,
    ).install(httpserver)
    configure(monkeypatch, "INCIDENT_IO", url=httpserver.url_for("").rstrip("/"), token=fake.key)
    window = Window(datetime(2025, 2, 1, tzinfo=timezone.utc), datetime(2025, 2, 28, tzinfo=timezone.utc))
    found = incidents(make_source(Settings(), "incident_io", None), window)
    assert sorted(found) == ["INC-1", "INC-2", "INC-4"]  # closed ones, two a page, over two pages
    assert slept == [2.0]
    assert fake.asked[0]["created_at[gte]"] == "2025-02-01" and fake.asked[0]["status_category[one_of]"] == "closed"
    first = found["INC-1"]
    assert (first.service, first.severity, first.status) == ("search-api", "Major", "Closed")
    assert first.root_cause == "A cold index after the reindex job."
    assert first.resolved_at.isoformat() == "2025-02-10T13:30:00+00:00"
    assert first.fixes_attempted[0].action.startswith("Latency back to normal after the warm-up")
    assert SLACK_TOKEN not in first.model_dump_json() and "Warming the index" in first.oncall_note
    assert found["INC-2"].error_signature == "AuthErrorRateHigh on auth-api"


# -- incident.io webhooks (learning) ------------------------------------------------------------------


WHSEC = "whsec_" + base64.b64encode(b"incident-io-signing-key-0123456789").decode()


def svix_signed(body: dict, msg_id: str, *, secret: str = WHSEC, at: float | None = None) -> tuple[bytes, dict]:
    """A delivery as Svix signs it: base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the secret's bytes."""
    raw = json.dumps(body).encode()
    stamp = str(int(time.time() if at is None else at))
    key = base64.b64decode(secret.removeprefix("whsec_"))
    mac = base64.b64encode(hmac.new(key, f"{msg_id}.{stamp}.".encode() + raw, hashlib.sha256).digest()).decode()
    headers = {"content-type": "application/json", "webhook-id": msg_id, "webhook-timestamp": stamp}
    return raw, {**headers, "webhook-signature": f"v1,{mac}"}


def test_an_incident_io_incident_is_learnt_as_it_closes(httpserver, monkeypatch, slept):
    from local_client import TestClient
    from tracker_fakes import FakeIncidentIo, io_incident

    from oncall_memory.service import create_app

    closing = io_incident(7, "Search latency through the roof", "## Root cause\nA cold index after the reindex job.\n")
    fake = FakeIncidentIo(
        incidents=[closing, io_incident(8, "Login errors", "AuthErrorRateHigh", category="live")],
        updates={
            "01HXYZ0007": [
                {"message": f"Warmed the index; key was {SLACK_TOKEN}", "created_at": "2025-02-10T13:25:00Z"}
            ]
        },
    ).install(httpserver)
    configure(monkeypatch, "INCIDENT_IO", url=httpserver.url_for("").rstrip("/"), token=fake.key)
    monkeypatch.setenv("ONCALL_MEMORY_INCIDENT_IO_WEBHOOK_SECRET", WHSEC)
    event = "public_incident.incident_status_updated_v2"
    closed = {"event_type": event, event: {"incident": closing, "new_status": {"category": "closed"}}}
    with TestClient(create_app(Settings())) as client:
        raw, headers = svix_signed(closed, "msg_1")
        forged = {**headers, "webhook-signature": "v1," + base64.b64encode(b"x" * 32).decode()}
        assert client.post("/webhooks/incident_io", content=raw, headers=forged).status_code == 401
        stale_raw, stale = svix_signed(closed, "msg_1", at=time.time() - 3600)  # a replay an hour later
        assert client.post("/webhooks/incident_io", content=stale_raw, headers=stale).status_code == 401
        answer = client.post("/webhooks/incident_io", content=raw, headers=headers)
        assert answer.status_code == 202 and answer.json()["accepted"] == 1
        found, started = [], time.monotonic()
        while not found and time.monotonic() - started < 20:
            answer = client.get("/similar", params={"text": "search latency high, cold index"})
            if answer.status_code == 200:
                found = [n for n in answer.json() if n["id"] == "INC-7"]
            time.sleep(0.05)
        assert found and found[0]["root_cause"].startswith("A cold index")
        assert SLACK_TOKEN not in json.dumps(found)
        # Svix's retry of the same message is a duplicate; an update of a live incident is ignored
        assert client.post("/webhooks/incident_io", content=raw, headers=headers).json()["duplicates"] == 1
        live = io_incident(8, "Login errors", "AuthErrorRateHigh", category="live")
        updated = "public_incident.incident_updated_v2"
        raw, headers = svix_signed({"event_type": updated, updated: live}, "msg_2")
        assert client.post("/webhooks/incident_io", content=raw, headers=headers).json()["ignored"] == updated
        # odd bodies: an id that could not go into a path is refused, nothing is a 500
        bad = {"event_type": updated, updated: {**closing, "id": "../../admin"}}
        raw, headers = svix_signed(bad, "msg_3")
        assert client.post("/webhooks/incident_io", content=raw, headers=headers).status_code == 422
        for body in ([], {"event_type": 5}, {"event_type": updated, updated: "x"}):
            raw, headers = svix_signed(body, "msg_4")  # type: ignore[arg-type]
            assert client.post("/webhooks/incident_io", content=raw, headers=headers).status_code == 202


def test_the_incident_io_webhook_is_off_without_its_secret_and_token():
    from local_client import TestClient

    from oncall_memory.service import create_app

    with TestClient(create_app(Settings())) as client:
        raw, headers = svix_signed({"event_type": "x"}, "msg_1")
        response = client.post("/webhooks/incident_io", content=raw, headers=headers)
    assert response.status_code == 404 and "ONCALL_MEMORY_INCIDENT_IO_WEBHOOK_SECRET" in response.text
