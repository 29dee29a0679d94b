"""The PagerDuty source against pytest-httpserver playing the REST API v2."""

import json
from datetime import datetime, timezone

import pytest
from pydantic import SecretStr
from werkzeug import Response

from oncall_memory.backlog import Rejected
from oncall_memory.errors import SourceFailed
from oncall_memory.sources import Window
from oncall_memory.sources.pagerduty import PagerDutySource

TOKEN = "pd-secret-token-123"
AUTH = {"Authorization": f"Token token={TOKEN}", "Accept": "application/vnd.pagerduty+json;version=2"}


def pd_incident(n: int, **extra) -> dict:
    return {
        "id": f"P{n:05d}",
        "title": f"IPsec tunnel down #{n}",
        "status": "resolved",
        "urgency": "high",
        "created_at": "2026-11-20T03:33:00Z",
        "last_status_change_at": "2026-11-20T04:10:00Z",
        "html_url": f"https://acme.pagerduty.com/incidents/P{n:05d}",
        "service": {"id": "PSVC1", "summary": "payments-api"},
        **extra,
    }


def serve_pagerduty(httpserver, incidents_pages, notes=None, alerts=None):
    def list_incidents(request):
        assert request.args["statuses[]"] == "resolved" and request.args["limit"] == "100"
        offset = int(request.args["offset"])
        page, more = incidents_pages[offset]
        body = {"incidents": page, "more": more, "offset": offset, "limit": 100}
        return Response(json.dumps(body), content_type="application/json")

    httpserver.expect_request("/incidents", headers=AUTH).respond_with_handler(list_incidents)
    for inc in [i for page, _ in incidents_pages.values() for i in page]:
        httpserver.expect_request(f"/incidents/{inc['id']}/notes", headers=AUTH).respond_with_json(
            {"notes": (notes or {}).get(inc["id"], [])}
        )
        httpserver.expect_request(f"/incidents/{inc['id']}/alerts", headers=AUTH).respond_with_json(
            {"alerts": (alerts or {}).get(inc["id"], [])}
        )


def source(httpserver, **kw) -> PagerDutySource:
    return PagerDutySource(SecretStr(TOKEN), base_url=httpserver.url_for(""), backoff=0.01, **kw)


def test_two_pages_notes_and_first_alert_are_mapped(httpserver):
    notes = {
        "P00001": [
            {"created_at": "2026-11-20T04:00:00Z", "content": "Restarting strongswan did nothing.\nFix: restart strongswan => no-op"},
            {"created_at": "2026-11-20T04:05:00Z", "content": "Root cause: processor rotated their peer IP\nFix: update peer address => resolved\nenv: payments-prod\nflavor: eks\ntags: ipsec, networking"},
        ]
    }
    alerts = {"P00001": [{"summary": "IKE_SA_INIT to peer timed out", "alert_key": "<env> ipsec pod not ready", "body": {"details": "tunnel pp-primary DOWN"}}]}
    serve_pagerduty(httpserver, {0: ([pd_incident(1), pd_incident(2)], True), 2: ([pd_incident(3)], False)}, notes, alerts)
    got = list(source(httpserver).incidents(None))
    assert [i.id for i in got] == ["P00001", "P00002", "P00003"]
    first = got[0]
    assert first.source == "pagerduty" and first.service == "payments-api"
    assert first.url == "https://acme.pagerduty.com/incidents/P00001"
    assert first.oncall_note == "Restarting strongswan did nothing."
    assert first.root_cause == "processor rotated their peer IP"
    assert [(f.action, f.outcome.value) for f in first.fixes_attempted] == [
        ("restart strongswan", "no-op"), ("update peer address", "resolved")]
    assert first.error_signature == "IKE_SA_INIT to peer timed out | tunnel pp-primary DOWN"
    assert first.signature == "<env> ipsec pod not ready"
    assert (first.env, first.flavor, first.component_tags) == ("payments-prod", "eks", ["ipsec", "networking"])
    assert first.resolved_at == datetime(2026, 11, 20, 4, 10, tzinfo=timezone.utc)


def test_window_and_service_ids_are_sent(httpserver):
    httpserver.expect_request("/incidents").respond_with_json({"incidents": [], "more": False})
    window = Window(datetime(2026, 11, 1, tzinfo=timezone.utc), datetime(2026, 11, 8, tzinfo=timezone.utc))
    assert list(source(httpserver, service_ids=["PSVC1", "PSVC2"]).incidents(window)) == []
    request = httpserver.log[0][0]
    assert request.args["since"] == "2026-11-01T00:00:00+00:00" and request.args["until"] == "2026-11-08T00:00:00+00:00"
    assert request.args.getlist("service_ids[]") == ["PSVC1", "PSVC2"]
    assert request.args["statuses[]"] == "resolved"


def test_a_429_with_retry_after_is_honoured_then_succeeds(httpserver):
    httpserver.expect_oneshot_request("/incidents").respond_with_response(
        Response("slow down", status=429, headers={"Retry-After": "1"})
    )
    serve_pagerduty(httpserver, {0: ([pd_incident(1)], False)})
    started = datetime.now()
    got = list(source(httpserver).incidents(None))
    assert [i.id for i in got] == ["P00001"]
    assert (datetime.now() - started).total_seconds() >= 1.0  # waited as told, not the 0.01s backoff


def test_500_that_exhausts_retries_raises_source_failed_without_leaking_the_token(httpserver, caplog):
    httpserver.expect_request("/incidents").respond_with_data("boom", status=500)
    with pytest.raises(SourceFailed, match="after 2 retries") as info:
        list(source(httpserver, max_retries=2).incidents(None))
    assert len(httpserver.log) == 3
    assert TOKEN not in str(info.value) and TOKEN not in caplog.text


def test_a_401_says_to_check_the_token(httpserver):
    httpserver.expect_request("/incidents").respond_with_data("unauthorized", status=401)
    with pytest.raises(SourceFailed, match="ONCALL_MEMORY_PAGERDUTY_TOKEN"):
        list(source(httpserver).incidents(None))


def test_an_unmappable_incident_is_rejected_and_the_rest_kept(httpserver):
    serve_pagerduty(httpserver, {0: ([pd_incident(1, title=""), pd_incident(2)], False)})
    got = list(source(httpserver).incidents(None))
    assert isinstance(got[0], Rejected) and "P00001" in got[0].where and "title" in got[0].reason
    assert got[1].id == "P00002"
