"""PagerDuty as a source, against a fake that keeps PagerDuty's published rules (see pagerduty_fake.py)."""

import time
from datetime import datetime, timezone

import pytest
from pagerduty_fake import TOKEN, FakePagerDuty, pd_incident
from pydantic import SecretStr

from oncall_memory.domain.rejected import Rejected
from oncall_memory.errors import SourceFailed
from oncall_memory.integrations.pagerduty import api as pd
from oncall_memory.integrations.pagerduty.api import PagerDutyAPI, RateLimiter, limiter_for
from oncall_memory.integrations.pagerduty.backlog import PagerDutySource, to_incident
from oncall_memory.sources import Window

NOV = Window(datetime(2026, 11, 1, tzinfo=timezone.utc), datetime(2026, 12, 1, tzinfo=timezone.utc))


def api(httpserver, **kw) -> PagerDutyAPI:
    return PagerDutyAPI(SecretStr(TOKEN), base_url=httpserver.url_for(""), backoff=0.01, **kw)


def source(httpserver, state_file=None, **kw) -> PagerDutySource:
    return PagerDutySource(api(httpserver, **kw), state_file=state_file)


def test_notes_and_the_oldest_alert_are_mapped(httpserver):
    fake = FakePagerDuty(incidents=[pd_incident(1), pd_incident(2)]).install(httpserver)
    fake.notes["P00001"] = [
        {
            "created_at": "2026-11-20T04:00:00Z",
            "content": "Restarting strongswan did nothing.\nFix: restart strongswan => no-op",
        },
        {
            "created_at": "2026-11-20T04:05:00Z",
            "content": "Root cause: processor rotated their peer IP\nFix: update peer address => resolved\nenv: payments-prod\nflavor: eks\ntags: ipsec, networking",
        },
    ]
    fake.alerts["P00001"] = [
        {"created_at": "2026-11-20T03:40:00Z", "summary": "a later alert", "alert_key": "later"},
        {
            "created_at": "2026-11-20T03:33:00Z",
            "summary": "IKE_SA_INIT to peer timed out",
            "alert_key": "<env> ipsec pod not ready",
            "body": {"details": "tunnel pp-primary DOWN"},
        },
    ]
    got = list(source(httpserver).incidents(NOV))
    assert [i.id for i in got] == ["P00001", "P00002"]
    first = got[0]
    assert first.source == "pagerduty" and first.service == "payments-api"
    assert first.oncall_note == "Restarting strongswan did nothing."
    assert first.root_cause == "processor rotated their peer IP"
    assert [(f.action, f.outcome.value) for f in first.fixes_attempted] == [
        ("restart strongswan", "no-op"),
        ("update peer address", "resolved"),
    ]
    # The oldest alert, asked for by creation time: the fake returns unsorted lists newest first.
    assert first.error_signature == "IKE_SA_INIT to peer timed out | tunnel pp-primary DOWN"
    assert first.signature == "<env> ipsec pod not ready"
    assert (first.env, first.flavor, first.component_tags) == ("payments-prod", "eks", ["ipsec", "networking"])
    assert first.resolved_at == datetime(2026, 11, 20, 4, 10, tzinfo=timezone.utc)


def test_a_datadog_monitors_title_gives_env_and_components_a_note_does_not():
    title = "[P2] [Triggered on {service:checkout,env:shop-prod,component:db}] Checkout p99 latency above 2s"
    told = to_incident({**pd_incident(1), "title": title}, [], None)
    assert (told.env, told.component_tags) == ("shop-prod", ["db"])
    assert told.service == "payments-api"  # PagerDuty's service, as its next alert's (`pagerduty_alert`)
    noted = [{"created_at": "2026-11-20T04:00:00Z", "content": "env: shop-staging"}]
    assert to_incident({**pd_incident(1), "title": title}, noted, None).env == "shop-staging"


def test_all_history_is_read_in_slices_inside_the_six_month_limit(httpserver):
    old = [pd_incident(i, created=f"{2016 + i}-03-0{1 + i % 8}T10:00:00Z") for i in range(10)]
    fake = FakePagerDuty(incidents=old).install(httpserver)
    got = list(source(httpserver).incidents(None))
    assert sorted(i.id for i in got) == sorted(i["id"] for i in old)  # none lost to the one-month default
    listings = [path for _, method, path in fake.requests if path == "/incidents"]
    assert len(listings) >= 2 * (2026 - 2009)  # every slice asked, none refused


def test_a_slice_over_the_offset_limit_is_bisected_in_time(httpserver, monkeypatch):
    monkeypatch.setattr(pd, "OFFSET_LIMIT", 300)  # the real limit is 10,000; the logic is the same
    many = [pd_incident(i, created=f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:00:00Z") for i in range(700)]
    FakePagerDuty(incidents=many).install(httpserver)
    with api(httpserver) as client:
        got = [i["id"] for i in client.incidents(NOV.since, NOV.until, statuses=["resolved"])]
    assert sorted(got) == sorted(i["id"] for i in many)


def test_a_429_waits_for_ratelimit_reset_then_succeeds(httpserver):
    FakePagerDuty(incidents=[pd_incident(1)], throttle=1, throttle_reset="1").install(httpserver)
    started = time.monotonic()
    got = list(source(httpserver).incidents(NOV))
    assert [i.id for i in got] == ["P00001"]
    assert time.monotonic() - started >= 1.0  # waited as PagerDuty asked, not the 0.01 s backoff


def test_a_429_wait_is_capped(httpserver):
    FakePagerDuty(incidents=[pd_incident(1)], throttle=1, throttle_reset="3600").install(httpserver)
    started = time.monotonic()
    assert [i.id for i in source(httpserver, max_wait=0.5).incidents(NOV)] == ["P00001"]
    assert time.monotonic() - started < 5


def test_a_400_says_what_pagerduty_refused(httpserver):
    FakePagerDuty().install(httpserver)
    with api(httpserver) as client, pytest.raises(SourceFailed) as info:
        client.get("/incidents", {"since": "2020-01-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"})
    assert "Date range cannot be larger than 6 months" in str(info.value) and "token" not in str(info.value)


def test_a_500_that_exhausts_retries_raises_source_failed_without_leaking_the_token(httpserver, caplog):
    httpserver.expect_request("/incidents").respond_with_data("boom", status=500)
    with pytest.raises(SourceFailed, match="after 2 retries") as info:
        list(source(httpserver, max_retries=2).incidents(NOV))
    assert len(httpserver.log) == 3
    assert TOKEN not in str(info.value) and TOKEN not in caplog.text


def test_a_401_says_to_check_the_token(httpserver):
    FakePagerDuty().install(httpserver)
    bad = PagerDutySource(PagerDutyAPI(SecretStr("wrong"), base_url=httpserver.url_for(""), backoff=0.01))
    with pytest.raises(SourceFailed, match="ONCALL_MEMORY_PAGERDUTY_TOKEN"):
        list(bad.incidents(NOV))


def test_an_unmappable_incident_is_rejected_and_the_rest_kept(httpserver):
    FakePagerDuty(incidents=[pd_incident(1, title=""), pd_incident(2)]).install(httpserver)
    got = list(source(httpserver).incidents(NOV))
    assert isinstance(got[0], Rejected) and "P00001" in got[0].where and "title" in got[0].reason
    assert got[1].id == "P00002"


def test_an_incident_open_longer_than_the_window_is_picked_up_when_it_resolves(httpserver, tmp_path):
    long_open = pd_incident(7, created="2026-09-01T00:00:00Z", status="acknowledged")
    fake = FakePagerDuty(incidents=[long_open]).install(httpserver)
    state = tmp_path / "pagerduty-open.json"
    first_window = Window(datetime(2026, 8, 25, tzinfo=timezone.utc), datetime(2026, 9, 5, tzinfo=timezone.utc))
    assert list(source(httpserver, state).incidents(first_window)) == []  # open: remembered
    long_open["status"] = "resolved"
    got = list(source(httpserver, state).incidents(NOV))  # a later window that no longer holds it
    assert [i.id for i in got] == ["P00007"]
    assert list(source(httpserver, state).incidents(NOV)) == []  # forgotten once ingested
    assert any(path == "/incidents/P00007" for _, _, path in fake.requests)


def test_the_limiter_keeps_every_client_of_one_key_under_its_rate():
    assert limiter_for("k1", 900) is limiter_for("k1", 900) and limiter_for("k1", 900) is not limiter_for("k2", 900)
    limiter = RateLimiter(600, burst_seconds=0.1)  # 10 a second, no burst to speak of
    started = time.monotonic()
    for _ in range(11):
        limiter.acquire()
    assert time.monotonic() - started >= 0.9
