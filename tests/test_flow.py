"""The scheduled ingest flow, run by Prefect's test harness (a temporary local API)."""

import json
import os
from datetime import datetime, timedelta, timezone

import pytest

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

from conftest import FIXTURES, snapshot  # noqa: E402
from pagerduty_fake import TOKEN, FakePagerDuty, pd_incident  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from oncall_memory.embedders.fake import FakeEmbedder  # noqa: E402
from oncall_memory.orchestration.flow import ingest_flow  # noqa: E402
from oncall_memory.settings import Settings  # noqa: E402
from oncall_memory.store.engines import open_store  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def prefect_api():
    # Imported here, not at the top: it imports Prefect's whole server (about 3 s of every worker's collection).
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture
def flow_settings(tmp_path):
    return Settings(
        data_dir=tmp_path / "data", embedder="fake", embed_batch_size=16, embed_retries=1, embed_retry_delays=[0.0]
    )


def stored(settings):
    with open_store(settings) as store:
        return snapshot(store)


def test_a_flow_run_over_jsonl_stores_the_incidents_and_a_rerun_embeds_nothing(flow_settings):
    first = ingest_flow("jsonl", str(FIXTURES), None, settings=flow_settings)
    # fixtures/: the 64 incidents of incidents.jsonl and the 4 post-mortems under postmortems/
    assert first == {"fetched": 68, "new": 68, "updated": 0, "unchanged": 0, "rejected": 0, "embedding_calls": 5}
    before = stored(flow_settings)
    again = FakeEmbedder()
    second = ingest_flow("jsonl", str(FIXTURES), None, settings=flow_settings, embedder=again)
    assert second["embedding_calls"] == 0 and second["unchanged"] == 68 and again.calls == []
    assert stored(flow_settings) == before


def test_the_window_keeps_only_recent_incidents(flow_settings):
    counts = ingest_flow("jsonl", str(FIXTURES), 60, settings=flow_settings)
    assert 0 < counts["fetched"] < 68  # the fixtures span two years


def test_an_embedder_down_on_the_second_batch_fails_the_run_leaves_no_partial_batch_and_a_rerun_completes(
    flow_settings,
):
    down = FakeEmbedder(fail_calls=[2, 3])  # the second batch fails, and so does its one retry
    state = ingest_flow("jsonl", str(FIXTURES), None, settings=flow_settings, embedder=down, return_state=True)
    assert state.is_failed()
    assert len(stored(flow_settings)) == 16  # batch 1 complete, batch 2 wrote nothing, 3-4 never ran
    rerun = ingest_flow("jsonl", str(FIXTURES), None, settings=flow_settings)
    assert (rerun["new"], rerun["unchanged"]) == (52, 16)
    assert len(stored(flow_settings)) == 68


def test_a_transient_embedding_failure_is_retried_by_the_task(flow_settings):
    flaky = FakeEmbedder(fail_calls=[2])
    counts = ingest_flow("jsonl", str(FIXTURES), None, settings=flow_settings, embedder=flaky)
    assert counts["new"] == 68 and len(flaky.calls) == 6


def pd_settings(flow_settings, httpserver):
    return flow_settings.replace(
        pagerduty_url=httpserver.url_for(""),
        pagerduty_token=SecretStr(TOKEN),
        pagerduty_backoff=0.01,
        pagerduty_max_retries=2,
    )


def test_a_pagerduty_run_maps_notes_into_memory(flow_settings, httpserver):
    recent = (datetime.now(timezone.utc) - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fake = FakePagerDuty(incidents=[pd_incident(1, created=recent), pd_incident(2, created=recent)]).install(httpserver)
    fake.notes["P00001"] = [{"created_at": recent, "content": "clearing stale SAs fixed it"}]
    settings = pd_settings(flow_settings, httpserver)
    counts = ingest_flow("pagerduty", None, 7, settings=settings)
    assert counts["new"] == 2
    payloads = {p["id"]: p for p in (json.loads(v[0]) for v in stored(settings).values())}
    assert payloads["P00001"]["oncall_note"] == "clearing stale SAs fixed it"
    assert payloads["P00001"]["source"] == "pagerduty"


def test_a_pagerduty_outage_fails_the_run_and_leaves_memory_exactly_as_it_was(flow_settings, httpserver):
    ingest_flow("jsonl", str(FIXTURES), None, settings=flow_settings)
    before = stored(flow_settings)
    httpserver.expect_request("/incidents").respond_with_data("down", status=500)
    state = ingest_flow("pagerduty", None, 7, settings=pd_settings(flow_settings, httpserver), return_state=True)
    assert state.is_failed()
    assert "failed after 2 retries" in str(state.result(raise_on_failure=False))
    assert stored(flow_settings) == before


def test_runs_are_named_by_what_they_read_and_when():
    from datetime import datetime, timezone

    from oncall_memory.orchestration.flow import run_name

    now = datetime(2026, 12, 1, 22, 50, tzinfo=timezone.utc)
    assert run_name({"source": "jsonl", "path": "fixtures/incidents.jsonl"}, now) == (
        "ingest incidents.jsonl, all of it (22:50Z)"
    )
    assert run_name({"source": "jsonl", "path": "/srv/history/", "window_days": 2}, now) == (
        "ingest history, 2026-11-29..2026-12-01 (22:50Z)"
    )
    assert run_name({"source": "pagerduty"}, now) == "ingest pagerduty, 2026-11-24..2026-12-01 (22:50Z)"
