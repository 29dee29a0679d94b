"""Every text an alert carries is read: Alertmanager's annotations by one rule (five public rule sets whose
keys differ, in tests/mixins), Grafana Alerting's contact point through the hook a plugin uses, PagerDuty's
custom details read before a triggered incident is looked up, Opsgenie's details."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURES
from local_client import TestClient
from pagerduty_fake import TOKEN as PD_TOKEN
from pagerduty_fake import FakePagerDuty, pd_incident
from pydantic import SecretStr
from werkzeug import Response

from oncall_memory.domain.annotations import texts
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.integrations.alertmanager.webhook import AlertmanagerWebhook, alertmanager_jobs
from oncall_memory.integrations.opsgenie.webhook import OpsgenieWebhook, opsgenie_job
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.outbox import Outbox
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl
from oncall_memory.store.engines import open_store

MIXINS = Path(__file__).parent / "mixins"
SLACK = "/slack/T000/B000/XXXX"

# -- the rule ---------------------------------------------------------------------------------------------


def test_the_headline_comes_first_then_every_other_text_once():
    got = texts({"description": "Job payments/x failed to complete.", "summary": "Job failed to complete."})
    assert got == ["Job failed to complete.", "Job payments/x failed to complete."]
    assert texts({"title": "Disk almost full", "message": "Root volume at 97%"})[0] == "Root volume at 97%"
    assert texts({"info": "More than 72% of node pool operations failed", "descripton": "typo'd key, still read"}) == [
        "More than 72% of node pool operations failed",
        "typo'd key, still read",
    ]
    assert texts({"summary": "Same words", "description": "same   words"}) == ["Same words"]


def test_links_ids_and_queries_are_left_out():
    got = texts(
        {
            "summary": "Alertmanager is failing sending notifications",
            "runbook_url": "https://runbooks.example.com/x",
            "runbook": "docs/monitoring/alertmanager-notification-failures.md",
            "dashboard": "https://grafana.example.com/d/abc",
            "documentation": "https://docs.ceph.com/en/latest/rados/operations/health-checks#osd-full",
            "correlationId": "UserJourneyClusterAutoscalerStalled/prod/ns",
            "__dashboardUid__": "abcd",
            "grafana_panel_id": "12",
            "grafana_state_reason": "Missing Series",  # why Grafana changed the state: not what the rule says
            "grafana_folder": "Shop alerts",
            "promql_query": "sum(rate(errors_total[5m])) by (job) > 0",
            "severity_level": "2",
        }
    )
    assert got == ["Alertmanager is failing sending notifications"]


def test_nested_details_are_read_in_order_and_bounded():
    details = {"error": {"message": "connection refused to orders-db"}, "context": ["retrying in 5 seconds", 3]}
    assert texts(details) == ["connection refused to orders-db", "retrying in 5 seconds"]
    deep: dict = {}
    node = deep
    for _ in range(50):
        node["next"] = node = {}
    node["message"] = "too deep to read"
    assert texts(deep) == []
    assert len(texts({f"k{i}": f"value number {i}" for i in range(10_000)})) == 200


# -- five public rule sets, as Alertmanager delivers them ------------------------------------------------

SAMPLE = {
    "namespace": "payments",
    "pod": "ledger-7c9f8d6b54-x2kq9",
    "container": "ledger",
    "cluster": "prod-eu1",
    "job": "thanos-compact",
    "job_name": "ledger-nightly-settlement",
    "daemonset": "fluent-bit",
    "persistentvolume": "pvc-1f2e3d4c",
    "phase": "Failed",
    "resource": "cpu",
    "route": "loki_api_v1_push",
    "ceph_daemon": "osd.3",
    "hostname": "storage-node-2",
    "kv_name": "ingester-ring",
}
_LABEL = re.compile(r"\{\{-?\s*(?:\$labels|\.Labels)\.(\w+)\s*-?\}\}")
_VALUE = re.compile(r"\{\{[^{}]*\$value[^{}]*\}\}")
_ACTION = re.compile(r"\{\{.*?\}\}", re.S)  # {{ if }}, {{ range query ... }}, {{ end }}: what is left


def render(template: str) -> str:
    """A rule's annotation as Prometheus renders it, with sample label values and a sample value."""
    text = _LABEL.sub(lambda m: SAMPLE.get(m[1], m[1]), template)
    return _ACTION.sub("", _VALUE.sub("97.5", text)).strip()


def delivered(rule: dict) -> dict:
    """One firing alert of the rule as Alertmanager's webhook carries it."""
    labels = {"alertname": rule["alert"], **rule.get("labels", {})}
    for name in _LABEL.findall(json.dumps(rule.get("annotations", {}))):
        labels.setdefault(name, SAMPLE.get(name, name))
    return {
        "status": "firing",
        "labels": labels,
        "annotations": {k: render(v) for k, v in rule.get("annotations", {}).items()},
        "startsAt": "2026-12-01T03:10:00Z",
        "fingerprint": hashlib.sha256(rule["alert"].encode()).hexdigest()[:16],
    }


def words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]{3,}", text)}


@pytest.mark.parametrize("mixin", sorted(p.name for p in MIXINS.glob("*.yaml")))
def test_the_lookup_text_holds_every_annotations_words_and_none_of_its_links(mixin):
    rules = [r for g in yaml.safe_load((MIXINS / mixin).read_text())["groups"] for r in g["rules"] if "alert" in r]
    keys = set()
    for rule in rules:
        alert = delivered(rule)
        hook = AlertmanagerWebhook.model_validate({"version": "4", "groupKey": rule["alert"], "alerts": [alert]})
        (job,), ignored = alertmanager_jobs(hook, Settings().service.label_facts)
        text = job.items[0].alert.text
        assert ignored == 0 and text.startswith(rule["alert"])
        for key, value in alert["annotations"].items():
            keys.add(key)
            if value.startswith("https://"):
                assert value not in text, f"{mixin} {rule['alert']}: the link in {key} reached the lookup"
            else:
                missing = words(value) - words(text)
                assert not missing, f"{mixin} {rule['alert']}: {key}'s words {sorted(missing)} were not read"
    assert len(rules) >= 4 and keys  # the file holds rules, and they carry annotations


def test_the_five_rule_sets_use_different_keys():
    keys = {
        p.name: frozenset(
            k for g in yaml.safe_load(p.read_text())["groups"] for r in g["rules"] for k in r["annotations"]
        )
        for p in MIXINS.glob("*.yaml")
    }
    assert len(keys) == 5 and len(set(keys.values())) == 5


# -- the pagers, through the service ------------------------------------------------------------------------


@pytest.fixture
def settings(httpserver, tmp_path, monkeypatch):
    monkeypatch.setenv("ONCALL_MEMORY_GRAFANA_SECRET", "grafana-shared-secret-1")
    return Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        pagerduty_url=httpserver.url_for(""),
        pagerduty_token=SecretStr(PD_TOKEN),
        pagerduty_from_email="oncall-memory@acme.example",
        slack_webhook_url=SecretStr(httpserver.url_for(SLACK)),
        post_backoff=0.01,
        post_backoff_cap=0.05,
        pagerduty_backoff=0.01,
    )


@pytest.fixture
def client(settings, httpserver):
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), settings)
    memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
    outbox = Outbox(settings.data_dir / "outbox.sqlite3")
    httpserver.expect_request(SLACK, method="POST").respond_with_response(Response("ok"))
    with TestClient(create_app(settings, memory=memory, outbox=outbox)) as c:
        yield c
    outbox.close()
    memory.close()


def slack_texts(httpserver) -> list[str]:
    return [json.dumps(json.loads(r.get_data())) for r, _ in httpserver.log if r.path == SLACK]


def test_grafanas_contact_point_is_mounted_through_the_hook_and_read_like_alertmanagers(client, httpserver):
    body = (FIXTURES / "webhooks" / "grafana-alerting.json").read_bytes()
    json_only = {"Content-Type": "application/json"}
    assert client.post("/webhooks/grafana", content=body, headers=json_only).status_code == 401
    wrong = {**json_only, "Authorization": "Bearer not-the-secret"}
    assert client.post("/webhooks/grafana", content=body, headers=wrong).status_code == 401
    ok = client.post(
        "/webhooks/grafana", content=body, headers={**json_only, "Authorization": "Bearer grafana-shared-secret-1"}
    )
    assert ok.status_code == 202 and ok.json() == {"accepted": 1, "duplicates": 0}
    assert client.app.state.dispatcher.join(30)
    (posted,) = slack_texts(httpserver)
    assert "CrashLoopBackOff right after the rollout" in posted and "CheckoutPodsRestarting" in posted
    job = client.app.state.outbox.job_of("grafana:a1b2c3d4e5f60718:2026-11-29T03:10:00Z")
    assert job is not None and job.key.startswith("grafana:")
    assert client.app.state.outbox.states(job.key) == {
        "answers": "done",
        "slack": "done",
    }  # the answer log keeps every answer
    assert "wiki.example.com" not in job.items[0].alert.text  # the runbook link is never looked up


def test_grafanas_hmac_signature_is_accepted_with_and_without_a_timestamp(client):
    body = (FIXTURES / "webhooks" / "grafana-alerting.json").read_bytes()
    secret = b"grafana-shared-secret-1"
    plain = hmac.new(secret, body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Grafana-Alerting-Signature": plain}
    assert client.post("/webhooks/grafana", content=body, headers=headers).status_code == 202
    stamp = str(int(time.time()))
    stamped = hmac.new(secret, f"{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/json",
        "X-Grafana-Alerting-Signature": stamped,
        "X-Grafana-Alerting-Signature-Timestamp": stamp,
    }
    assert client.post("/webhooks/grafana", content=body, headers=headers).json()["duplicates"] == 1
    stale = str(int(time.time()) - 3600)
    headers["X-Grafana-Alerting-Signature-Timestamp"] = stale
    headers["X-Grafana-Alerting-Signature"] = hmac.new(secret, f"{stale}:".encode() + body, hashlib.sha256).hexdigest()
    assert client.post("/webhooks/grafana", content=body, headers=headers).status_code == 401


def test_a_grafana_storm_is_claimed_unread_then_read_as_a_small_group_is(client, httpserver):
    """Past READ_AT_ONCE firing alerts Grafana's group is answered once claimed (issue 54), hand-made alerts
    without a fingerprint keyed as when read at once, and the worker's reading gives the same items."""
    from oncall_memory.integrations.grafana.webhook import READ_AT_ONCE, GrafanaWebhook, grafana_jobs

    data = json.loads((FIXTURES / "webhooks" / "grafana-alerting.json").read_text())
    alert = data["alerts"][0]
    data["alerts"] = [
        {**alert, "fingerprint": f"g{i:05d}", "labels": {**alert["labels"], "pod": f"checkout-7d9c6b8f5-{i:05d}"}}
        for i in range(READ_AT_ONCE + 20)
    ]
    data["alerts"][4] = {**data["alerts"][4], "fingerprint": ""}  # keyed by its labels, as when read at once
    data["alerts"][6] = {**data["alerts"][6], "labels": {}, "annotations": {"runbook_url": "https://r.example"}}
    auth = {"Content-Type": "application/json", "Authorization": "Bearer grafana-shared-secret-1"}
    answer = client.post("/webhooks/grafana", content=json.dumps(data).encode(), headers=auth)
    assert answer.status_code == 202 and answer.json() == {"accepted": 1, "duplicates": 0, "ignored": 1}
    assert client.app.state.dispatcher.join(30)
    (at_once,), _ = grafana_jobs(GrafanaWebhook.model_validate(data), client.app.state.settings.service.label_facts, {})
    stored = client.app.state.outbox.job_of(at_once.items[0].key)
    assert stored is not None and stored.unread == {}
    assert [i.model_dump() for i in stored.items] == [i.model_dump() for i in at_once.items]
    assert any(i.key == at_once.items[4].key for i in stored.items) and "grafana::" not in at_once.items[4].key
    (posted,) = slack_texts(httpserver)
    assert "CheckoutPodsRestarting" in posted


def test_a_grafana_alert_without_annotations_is_read_by_the_posts_title_and_message(client):
    from oncall_memory.integrations.grafana.webhook import GrafanaWebhook, grafana_jobs

    data = json.loads((FIXTURES / "webhooks" / "grafana-alerting.json").read_text())
    data["alerts"][0]["annotations"] = {}
    (job,), _ = grafana_jobs(GrafanaWebhook.model_validate(data), None, {})
    text = job.items[0].alert.text
    assert "CheckoutPodsRestarting" in text and "grafana.example.com" not in text.split("Source:")[0]


def triggered(client, httpserver, incident: str, title: str, details: dict) -> str:
    """The Slack message posted for a triggered PagerDuty incident whose first alert carries `details`, once
    the service has asked PagerDuty for them."""
    pd = FakePagerDuty(
        incidents=[pd_incident(0, id=incident, title=title)],
        alerts={incident: [{"id": "A1", "created_at": "2026-11-29T03:10:00Z", "body": {"details": details}}]},
    ).install(httpserver)
    event = json.loads((FIXTURES / "webhooks" / "pagerduty-incident-triggered.json").read_text())
    event["event"]["data"].update(title=title, id=incident)
    sent = client.post("/webhooks/pagerduty", content=json.dumps(event), headers={"Content-Type": "application/json"})
    assert sent.status_code == 202
    assert client.app.state.dispatcher.join(30)
    assert any("/alerts" in path for _, _, path in pd.requests)  # the details were asked for
    (posted,) = slack_texts(httpserver)
    return posted


def test_a_triggered_incidents_custom_details_are_read_before_its_lookup(client, httpserver):
    details = {
        "firing": "Labels:\n - alertname = KubePodCrashLooping\nAnnotations:\n - summary = checkout pods crash looping",
        "num_firing": "1",
        "description": "Pod checkout/checkout-7d9c6b8f5-x2kq9 keeps restarting, CrashLoopBackOff after deploy",
    }
    posted = triggered(client, httpserver, "PGR0VU2", "[FIRING:1] KubePodCrashLooping", details)
    assert "CrashLoopBackOff after deploy" in posted


def test_opsgenies_details_prose_is_read_beside_its_message():
    data = json.loads((FIXTURES / "webhooks" / "opsgenie-create.json").read_text())
    data["alert"]["details"] = {"service": "checkout", "impact": "checkout pods restart in a crash loop", "id": "7"}
    job = opsgenie_job(OpsgenieWebhook.model_validate(data))
    assert "checkout pods restart in a crash loop" in job.items[0].alert.text


# -- Alertmanager's own text list of alerts, as its PagerDuty and Opsgenie receivers send it -----------------


def text_alert_list(alerts: list[dict]) -> str:
    """Alertmanager's `__text_alert_list` template (template/default.tmpl), rendered: each alert's sorted
    labels and annotations as ` - name = value` lines, then `Source: <generatorURL>`."""
    out = []
    for a in alerts:
        out.append("Labels:\n" + "".join(f" - {k} = {v}\n" for k, v in sorted(a["labels"].items())))
        out.append("Annotations:\n" + "".join(f" - {k} = {v}\n" for k, v in sorted(a["annotations"].items())))
        out.append(f"Source: {a['generatorURL']}\n")
    return "".join(out)


CRASH_LOOP = {
    "labels": {"alertname": "KubePodCrashLooping", "namespace": "checkout", "severity": "warning"},
    "annotations": {
        "description": "Pod checkout/checkout-7d9c6b8f5-x2kq9 (checkout) is in waiting state (reason: CrashLoopBackOff).",
        "runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping",
        "summary": "Pod is crash looping.",
    },
    "generatorURL": "http://prometheus-k8s.monitoring:9090/graph?g0.expr=max_over_time%28kube_pod_container_status_"
    "waiting_reason%7Breason%3D%22CrashLoopBackOff%22%7D%5B5m%5D%29+%3E%3D+1&g0.tab=1",
}


def test_the_alert_list_alertmanager_sends_pagerduty_is_read_back_as_its_webhook_carries_it():
    from oncall_memory.integrations.pagerduty.details import details_texts

    # Alertmanager's PagerDuty receiver's default details: `firing` is the text list of the firing alerts.
    other = {**CRASH_LOOP, "labels": {**CRASH_LOOP["labels"], "pod": "checkout-2"}}
    details = {"firing": text_alert_list([CRASH_LOOP, other]), "num_firing": "2", "num_resolved": "0", "resolved": ""}
    said, metrics = details_texts({"body": {"details": details}}, skip=["KubePodCrashLooping"])
    assert said == ["Pod is crash looping.", CRASH_LOOP["annotations"]["description"]]  # the headline first, no link
    assert metrics == ["kube_pod_container_status_waiting_reason"]
    # Read as text, every line of the list is ceremony: nothing of the annotations would reach the lookup.
    from oncall_memory.domain.distill import distill_alert

    assert distill_alert(details["firing"]) == ""


def test_opsgenies_description_from_alertmanager_is_read_as_its_alerts_annotations():
    description = "Pod is crash looping.\nAlerts Firing:\n" + text_alert_list(
        [CRASH_LOOP]
    )  # opsgenie.default.description
    data = json.loads((FIXTURES / "webhooks" / "opsgenie-create.json").read_text())
    data["alert"].update(
        message="[FIRING:1] KubePodCrashLooping (checkout warning)", description=description, details={}
    )
    job = opsgenie_job(OpsgenieWebhook.model_validate(data))
    alert = job.items[0].alert
    assert "CrashLoopBackOff" in alert.text and "Pod is crash looping." in alert.text
    assert "Labels:" not in alert.text and "runbooks.prometheus-operator.dev" not in alert.text
    assert alert.metrics == ["kube_pod_container_status_waiting_reason"]


def test_a_list_that_is_not_alertmanagers_is_read_as_text():
    from oncall_memory.domain.alert_list import listed_texts, read_alert_list

    assert read_alert_list("Disk full on db-1: labels were fine, annotations too.") == []
    assert listed_texts({"note": "The disk on db-1 is full again"}) == (["The disk on db-1 is full again"], [])


def test_a_strangers_alert_list_is_read_in_linear_time():
    from oncall_memory.domain.alert_list import MAX_ALERTS, read_alert_list

    many = text_alert_list([CRASH_LOOP] * 5_000)
    tall = "Labels:\n - a = b\nAnnotations:\n - description = x\n" + "more words\n" * 200_000
    started = time.perf_counter()
    assert len(read_alert_list(many)) == MAX_ALERTS
    assert len(read_alert_list(tall)[0].annotations["description"]) > 2_000_000
    assert time.perf_counter() - started < 10  # well under a second here; a quadratic read takes minutes


def test_a_triggered_incident_from_alertmanager_is_looked_up_by_its_alerts_annotations(client, httpserver):
    """Alertmanager's PagerDuty receiver with its default details: the annotations are only in `firing`."""
    details = {"firing": text_alert_list([CRASH_LOOP]), "num_firing": "1", "num_resolved": "0", "resolved": ""}
    posted = triggered(client, httpserver, "PGR0VU3", "[FIRING:1] KubePodCrashLooping (checkout warning)", details)
    assert "Pod is crash looping." in posted and "waiting state" in posted
    assert "Labels:" not in posted
