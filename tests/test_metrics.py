"""`/metrics`: scraped the way Prometheus scrapes it (bearer token, text format parsed by
prometheus-client's own parser), and every family moves with the traffic that should move it."""

import json
import re
import shutil
import subprocess

import pytest
import yaml
from conftest import FIXTURES, ROOT, make_incident
from local_client import TestClient
from pagerduty_fake import TOKEN as PD_TOKEN
from pagerduty_fake import FakePagerDuty, pd_incident
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from test_service import SLACK, body_of, drain, post_pd, slack_ok
from werkzeug import Response

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.outbox import Outbox
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store

API = "metrics-reader-token"
AUTH = {"Authorization": f"Bearer {API}"}


@pytest.fixture
def settings(httpserver, tmp_path):
    return Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        api_token=SecretStr(API),
        pagerduty_url=httpserver.url_for(""),
        pagerduty_token=SecretStr(PD_TOKEN),
        pagerduty_from_email="oncall-memory@acme.example",
        pagerduty_webhook_secret=SecretStr("whsec-topsecret-value"),
        slack_webhook_url=SecretStr(httpserver.url_for(SLACK)),
        post_backoff=0.01,
        post_backoff_cap=0.05,
        post_max_retries=1,
        pagerduty_backoff=0.01,
    )


@pytest.fixture
def embedder():
    return FakeEmbedder(fail_calls=[66])  # 64 fixtures = 1 batch ... the lookup after the first is refused


@pytest.fixture
def client(settings, embedder, httpserver):
    FakePagerDuty(incidents=[pd_incident(0, id="PGR0VU2")]).install(httpserver)
    memory = Memory(open_store(Settings(data_dir=":memory:")), embedder, settings)
    with (
        Outbox(settings.data_dir / "outbox.sqlite3") as box,
        TestClient(create_app(settings, memory=memory, outbox=box)) as c,
    ):
        yield c
    memory.close()


def scrape(client) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", headers=AUTH)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def value(samples, name, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_needs_the_api_token(client):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_counters_move_with_ingest_lookups_and_requests(client, embedder):
    memory = client.app.state.memory
    before = scrape(client)
    assert value(before, "oncall_memory_ingest_runs_total", outcome="completed") == 0
    assert value(before, "oncall_memory_incidents") == 0 or ("oncall_memory_incidents", ()) not in before

    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))  # embedding call 1
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))  # nothing changed: no call
    memory.ingest([make_incident(id="INC-M1", title="brand new: ingress 502s after a config reload")])  # call 2
    after_ingest = scrape(client)
    assert value(after_ingest, "oncall_memory_ingest_runs_total", outcome="completed") == 3
    assert value(after_ingest, "oncall_memory_ingested_incidents_total", result="new") == 65
    assert value(after_ingest, "oncall_memory_ingested_incidents_total", result="unchanged") == 64
    assert value(after_ingest, "oncall_memory_incidents") == 65
    assert value(after_ingest, "oncall_memory_embedder_duration_seconds_count", purpose="ingest") == 2

    ok = client.get("/similar", params={"text": "pods crash looping"}, headers=AUTH)  # embedding call 3
    assert ok.status_code == 200
    # calls 4..65 are the readiness probe and lookups; make the next lookup's call fail to degrade it
    embedder._fail_calls = {len(embedder.calls) + 1}
    degraded = client.get("/similar", params={"text": "pods crash looping"}, headers=AUTH)
    assert degraded.status_code == 200
    assert client.get("/similar", params={"text": "x", "limit": 500}, headers=AUTH).status_code in (400, 422)
    client.get("/incidents-that-do-not-exist/../../etc/passwd", headers=AUTH)

    s = scrape(client)
    assert value(s, "oncall_memory_lookups_total", mode="hybrid", degraded="false") == 1
    assert value(s, "oncall_memory_lookups_total", mode="lexical", degraded="true") == 1
    assert value(s, "oncall_memory_lookup_duration_seconds_count") == 2
    assert value(s, "oncall_memory_embedder_failures_total", purpose="lookup") == 1
    assert value(s, "oncall_memory_embedder_duration_seconds_count", purpose="lookup") == 2
    # requests by route template, method and status; an unknown path is one label, not its own series
    assert value(s, "oncall_memory_http_requests_total", route="/similar", method="GET", status="200") == 2
    assert value(s, "oncall_memory_http_requests_total", route="/metrics", method="GET", status="200") == 2
    assert value(s, "oncall_memory_http_requests_total", route="unmatched", method="GET", status="404") == 1
    assert value(s, "oncall_memory_http_request_duration_seconds_count", route="/similar") == 3
    assert not any("passwd" in str(key) for key in s)


def test_deliveries_by_target_and_outcome_and_the_outbox_depth(client, httpserver):
    memory = client.app.state.memory
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    # Slack fails once (retried), then answers; PagerDuty takes the note at once.
    httpserver.expect_oneshot_request(SLACK, method="POST").respond_with_response(Response("busy", status=500))
    slack_ok(httpserver)
    assert post_pd(client, body_of("pagerduty-incident-triggered.json")).status_code == 202
    drain(client)
    s = scrape(client)
    assert value(s, "oncall_memory_deliveries_total", target="pagerduty-note", outcome="delivered") == 1
    assert value(s, "oncall_memory_deliveries_total", target="slack", outcome="retried") == 1
    assert value(s, "oncall_memory_deliveries_total", target="slack", outcome="delivered") == 1
    waiting = {k: v for k, v in s.items() if k[0] == "oncall_memory_outbox_depth"}
    assert waiting and not any(waiting.values())  # nothing waiting: each target and state at 0

    # Slack now refuses for good: the delivery is retried, then given up, and shows as failed in the depth
    httpserver.clear_all_handlers()
    FakePagerDuty(incidents=[pd_incident(0, id="PGR0VU3")]).install(httpserver)
    httpserver.expect_request(SLACK, method="POST").respond_with_response(Response("down", status=503))
    body = json.loads(body_of("pagerduty-incident-triggered.json"))
    body["event"]["id"], body["event"]["data"]["id"] = "01DEN3P0H3RK0Q0000000000", "PGR0VU3"
    assert post_pd(client, json.dumps(body).encode()).status_code == 202
    drain(client)
    s = scrape(client)
    assert value(s, "oncall_memory_deliveries_total", target="slack", outcome="failed") == 1
    assert value(s, "oncall_memory_outbox_depth", target="slack", state="failed") == 1


def used_series() -> tuple[set[str], list[str]]:
    """The series the shipped dashboard plots and the shipped rules read, and the dashboard's expressions."""
    dashboard = json.loads((ROOT / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    rules = yaml.safe_load((ROOT / "monitoring" / "prometheus-rules.yml").read_text())
    exprs_rules = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    names = r"\b((?:oncall_memory|process)_[a-z_]+)"
    return {name for expr in exprs + exprs_rules for name in re.findall(names, expr)}, exprs


def test_every_series_the_dashboard_and_rules_read_has_a_sample_from_the_first_scrape(client):
    # A fresh service: nothing ingested, nothing looked up, nothing delivered. Each series must have a
    # sample all the same (at 0), or a panel says "No data" and rate() misses the first event.
    samples = scrape(client)
    exposed = {name for name, _ in samples}
    used, exprs = used_series()
    assert len(used) >= 12
    assert used <= exposed, sorted(used - exposed)
    assert all('job="$job"' in expr for expr in exprs)
    assert value(samples, "oncall_memory_lookups_total", mode="hybrid", degraded="true") == 0
    for target in ("pagerduty-note", "slack"):  # the configured targets, each outcome and waiting state
        assert ("oncall_memory_deliveries_total", (("outcome", "failed"), ("target", target))) in samples
        assert ("oncall_memory_outbox_depth", (("state", "pending"), ("target", target))) in samples
    assert value(samples, "oncall_memory_incidents") == 0 and value(samples, "oncall_memory_unindexed_incidents") == 0
    assert value(samples, "process_resident_memory_bytes") > 0  # process metrics


def test_the_dashboard_says_what_unit_each_series_is_in():
    # A rate of a counter is events per second, never seconds: a panel mixing latency and failures puts
    # the failures on their own axis with their own unit.
    dashboard = json.loads((ROOT / "grafana-dashboard.json").read_text())
    for panel in dashboard["panels"]:
        unit = panel["fieldConfig"]["defaults"].get("unit")
        overridden = {
            o["matcher"]["options"]: {p["id"]: p["value"] for p in o["properties"]}
            for o in panel["fieldConfig"].get("overrides", [])
            if o["matcher"]["id"] == "byFrameRefID"
        }
        for target in panel["targets"]:
            own = overridden.get(target["refId"], {}).get("unit", unit)
            if re.search(r"rate\(oncall_memory_\w+_total", target["expr"]):
                assert own not in ("s", "ms", "bytes"), (panel["title"], target["expr"], own)
            if "histogram_quantile" in target["expr"] and "seconds" in target["expr"]:
                assert own == "s", (panel["title"], own)


PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(
    PROMTOOL is None,
    reason="no promtool on this machine: `apt-get install prometheus` (tests/install-tools.sh does it as root)",
)
def test_the_alerting_rules_pass_their_promtool_unit_tests(tmp_path):
    monitoring = ROOT / "monitoring"
    check = subprocess.run(
        [PROMTOOL, "check", "rules", str(monitoring / "prometheus-rules.yml")], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    tests = subprocess.run(
        [PROMTOOL, "test", "rules", "prometheus-rules.test.yml"], cwd=monitoring, capture_output=True, text=True
    )
    assert tests.returncode == 0 and "SUCCESS" in tests.stdout, tests.stdout + tests.stderr
    # The shipped config checks as shipped: its rules are found beside it, wherever it is.
    shipped = subprocess.run(
        [PROMTOOL, "check", "config", "--syntax-only", str(monitoring / "prometheus.yml")],
        capture_output=True,
        text=True,
    )
    assert shipped.returncode == 0, shipped.stdout + shipped.stderr
    # And whole (rules loaded, the token file read) once the compose secret exists: here, a copy of both
    # files side by side with the secret's path pointed at a file.
    token = tmp_path / "token"
    token.write_text("x")
    config = (monitoring / "prometheus.yml").read_text()
    assert "/run/secrets/oncall_memory_api_token" in config
    (tmp_path / "prometheus.yml").write_text(config.replace("/run/secrets/oncall_memory_api_token", str(token)))
    (tmp_path / "prometheus-rules.yml").write_text((monitoring / "prometheus-rules.yml").read_text())
    valid = subprocess.run(
        [PROMTOOL, "check", "config", str(tmp_path / "prometheus.yml")], capture_output=True, text=True
    )
    assert valid.returncode == 0, valid.stdout + valid.stderr


def test_with_no_target_every_series_still_has_a_sample_from_the_first_scrape(tmp_path):
    """Issue 84: a team trying the service with no Slack or PagerDuty saw two panels say "No data": with no
    target, the deliveries and the outbox had no series. The answer log is a target every service has."""
    settings = Settings(data_dir=tmp_path / "data", embedder="fake", api_token=SecretStr(API))
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    with TestClient(create_app(settings, memory=memory)) as c:
        samples = scrape(c)
    memory.close()
    used, _ = used_series()
    exposed = {name for name, _ in samples}
    assert len(used) >= 12 and used <= exposed, sorted(used - exposed)
    assert ("oncall_memory_deliveries_total", (("outcome", "delivered"), ("target", "answers"))) in samples
    assert ("oncall_memory_outbox_depth", (("state", "pending"), ("target", "answers"))) in samples
    assert value(samples, "oncall_memory_alert_families_nothing_close") == 0
