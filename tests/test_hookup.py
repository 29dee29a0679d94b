"""The copy-paste receivers of docs/integrations.md work with the real pager: Debian's Alertmanager checks the
shipped receiver (`amtool check-config`) and sends a firing alert through it to a running service, whose
answer reaches Slack; and Debian's Prometheus, firing a rule through it, links the alert to its rule's
expression as the metrics reader expects (`promql`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from datetime import datetime, timezone
from urllib.parse import quote_plus

import httpx
import pytest
from conftest import FIXTURES, ROOT, serving
from pydantic import SecretStr

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.integrations.alertmanager.webhook import AlertmanagerWebhook, alertmanager_jobs
from oncall_memory.memory import Memory
from oncall_memory.orchestration.schedule import free_port
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

ALERTMANAGER = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
AMTOOL = shutil.which("amtool")
pytestmark = pytest.mark.skipif(
    ALERTMANAGER is None or AMTOOL is None,
    reason="no Alertmanager here: `apt-get install prometheus-alertmanager` (tests/install-tools.sh does it as root)",
)
TOKEN = "am-receiver-token-3f9a"


def documented_receiver() -> str:
    """The alertmanager.yml block docs/integrations.md tells people to copy."""
    text = (ROOT / "docs" / "integrations.md").read_text()
    (block,) = re.findall(r"```yaml\n(# alertmanager\.yml\n.*?)```", text, re.S)
    return block


def configured(tmp_path, service_url: str) -> str:
    token = tmp_path / "oncall-memory-token"
    token.write_text(TOKEN)
    config = documented_receiver()
    assert "https://oncall-memory.example.internal/webhooks/alertmanager" in config
    config = config.replace("https://oncall-memory.example.internal", service_url)
    config = config.replace("/etc/alertmanager/oncall-memory-token", str(token))
    return config.replace("group_wait: 30s", "group_wait: 1s")  # the test's own patience


def test_the_documented_receiver_passes_amtool(tmp_path):
    path = tmp_path / "alertmanager.yml"
    path.write_text(configured(tmp_path, "http://127.0.0.1:8080"))
    check = subprocess.run([AMTOOL, "check-config", str(path)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS" in check.stdout


def test_a_real_alertmanager_posts_through_the_documented_receiver_and_the_answer_reaches_slack(tmp_path, httpserver):
    httpserver.expect_request("/slack-hook", method="POST").respond_with_data("ok")
    settings = Settings(
        data_dir=tmp_path / "data",
        embedder="fake",
        alertmanager_token=SecretStr(TOKEN),
        slack_webhook_url=SecretStr(httpserver.url_for("/slack-hook")),
        post_backoff=0.05,
    )
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(FIXTURES / "incidents.jsonl"))
        with serving(create_app(settings, memory=memory)) as base:
            config = tmp_path / "alertmanager.yml"
            config.write_text(configured(tmp_path, base))
            port = free_port()
            am = subprocess.Popen(
                [
                    ALERTMANAGER,
                    f"--config.file={config}",
                    f"--storage.path={tmp_path / 'am'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--cluster.listen-address=",  # one Alertmanager, no gossip
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                api = f"http://127.0.0.1:{port}"
                deadline = time.monotonic() + 60
                while True:
                    try:
                        if httpx.get(f"{api}/-/ready", timeout=2).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    assert am.poll() is None and time.monotonic() < deadline, "Alertmanager did not start"
                    time.sleep(0.2)
                alert = {
                    "labels": {
                        "alertname": "KubePodCrashLooping",
                        "namespace": "shop",
                        "pod": "checkout-7d9f8b6c4-x2kq9",
                        "container": "checkout",
                        "severity": "critical",
                    },
                    "annotations": {
                        "summary": "Pod is crash looping.",
                        "description": "Pod shop/checkout-7d9f8b6c4-x2kq9 (checkout) is in waiting state "
                        "(reason: CrashLoopBackOff): back-off restarting failed container",
                    },
                    "startsAt": datetime.now(timezone.utc).isoformat(),
                }
                assert httpx.post(f"{api}/api/v2/alerts", json=[alert], timeout=10).status_code == 200
                deadline = time.monotonic() + 60
                while not httpserver.log and time.monotonic() < deadline:
                    assert am.poll() is None, am.stderr.read() if am.stderr else ""
                    time.sleep(0.2)
            finally:
                am.terminate()
                try:
                    _, errors = am.communicate(timeout=20)
                except subprocess.TimeoutExpired:
                    am.kill()
                    _, errors = am.communicate()
    assert httpserver.log, f"no Slack message: Alertmanager said {errors[-2000:]}"
    request, _ = httpserver.log[0]
    message = json.dumps(request.get_json())
    assert "KubePodCrashLooping" in message and "INC-1001" in message


PROMETHEUS = shutil.which("prometheus")


def started(argv: list[str], ready: str) -> subprocess.Popen:
    """A server process, once its readiness URL answers 200 (within a minute)."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(ready, timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"{argv[0]} did not start: {process.communicate()[1][-2000:]}")
        time.sleep(0.2)


def stopped(process: subprocess.Popen) -> str:
    process.terminate()
    try:
        return process.communicate(timeout=20)[1]
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate()[1]


@pytest.mark.skipif(
    PROMETHEUS is None, reason="no Prometheus here: `apt-get install prometheus` (tests/install-tools.sh)"
)
def test_a_real_prometheus_rules_link_names_the_metric_it_watches(tmp_path, httpserver):
    """Prometheus evaluates a rule on its own metric and sends the alert to Alertmanager, which posts its
    webhook: the `generatorURL` in it is Prometheus' own, and the alert read from it names the metric."""
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    am_port, prom_port = free_port(), free_port()
    (tmp_path / "alertmanager.yml").write_text(
        "route: {receiver: hook, group_wait: 1s, group_interval: 1s}\n"
        f"receivers: [{{name: hook, webhook_configs: [{{url: '{httpserver.url_for('/hook')}'}}]}}]\n"
    )
    (tmp_path / "rules.yml").write_text(
        "groups:\n- name: selfcheck\n  rules:\n  - alert: PrometheusIsBuilt\n"
        '    expr: count by (job) (prometheus_build_info{job="prometheus"}) > 0\n'
        "    annotations: {summary: Prometheus reports its build.}\n"
    )
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: ['{tmp_path / 'rules.yml'}']\n"
        f"alerting: {{alertmanagers: [{{static_configs: [{{targets: ['127.0.0.1:{am_port}']}}]}}]}}\n"
        f"scrape_configs: [{{job_name: prometheus, static_configs: [{{targets: ['127.0.0.1:{prom_port}']}}]}}]\n"
    )
    am = started(
        [
            str(ALERTMANAGER),
            f"--config.file={tmp_path / 'alertmanager.yml'}",
            f"--storage.path={tmp_path / 'am'}",
            f"--web.listen-address=127.0.0.1:{am_port}",
            "--cluster.listen-address=",
        ],
        f"http://127.0.0.1:{am_port}/-/ready",
    )
    try:
        prometheus = started(
            [
                str(PROMETHEUS),
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            f"http://127.0.0.1:{prom_port}/-/ready",
        )
        try:
            deadline = time.monotonic() + 90
            while not httpserver.log and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            said = stopped(prometheus)
    finally:
        stopped(am)
    assert httpserver.log, f"no webhook from Alertmanager; Prometheus said {said[-2000:]}"
    body = httpserver.log[0][0].get_json()
    link = body["alerts"][0]["generatorURL"]
    assert "/graph?g0.expr=" in link  # Prometheus' link to the rule's expression
    hook = AlertmanagerWebhook.model_validate(body)
    (job,), _ = alertmanager_jobs(hook, Settings().service.label_facts)
    assert job.items[0].alert.metrics == ["prometheus_build_info"]
    assert "Prometheus reports its build." in job.items[0].alert.text


def test_a_real_alertmanagers_pagerduty_details_are_read_back_into_the_alerts_annotations(tmp_path, httpserver):
    """Alertmanager's PagerDuty receiver, with its default details, renders the firing alerts as its text list
    (`firing`); posted to a stand-in for PagerDuty's Events API, those details are read back as the custom
    details refiner reads an incident's first alert."""
    from oncall_memory.integrations.pagerduty.details import details_texts

    httpserver.expect_request("/v2/enqueue", method="POST").respond_with_json({"status": "success"}, status=202)
    port = free_port()
    (tmp_path / "alertmanager.yml").write_text(
        "route: {receiver: pd, group_wait: 1s}\n"
        f"receivers: [{{name: pd, pagerduty_configs: [{{routing_key: r0, url: '{httpserver.url_for('/v2/enqueue')}'}}]}}]\n"
    )
    am = started(
        [
            str(ALERTMANAGER),
            f"--config.file={tmp_path / 'alertmanager.yml'}",
            f"--storage.path={tmp_path / 'am'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
        ],
        f"http://127.0.0.1:{port}/-/ready",
    )
    expr = 'max_over_time(kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff"}[5m]) >= 1'
    alert = {
        "labels": {"alertname": "KubePodCrashLooping", "namespace": "shop", "severity": "warning"},
        "annotations": {
            "summary": "Pod is crash looping.",
            "description": "Pod shop/checkout-7d9f8b6c4-x2kq9 is in waiting state (reason: CrashLoopBackOff).",
            "runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping",
        },
        "generatorURL": "http://prometheus-k8s.monitoring:9090/graph?g0.expr=" + quote_plus(expr) + "&g0.tab=1",
        "startsAt": datetime.now(timezone.utc).isoformat(),
    }
    try:
        assert httpx.post(f"http://127.0.0.1:{port}/api/v2/alerts", json=[alert], timeout=10).status_code == 200
        deadline = time.monotonic() + 60
        while not httpserver.log and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        said = stopped(am)
    assert httpserver.log, f"no event from Alertmanager: {said[-2000:]}"
    event = httpserver.log[0][0].get_json()
    details = event["payload"]["custom_details"]
    assert "Labels:" in details["firing"]  # Alertmanager's own text list
    texts, metrics = details_texts({"body": {"details": details}}, skip=["KubePodCrashLooping"])
    assert texts[:2] == ["Pod is crash looping.", alert["annotations"]["description"]]
    assert not any("runbooks.prometheus-operator.dev" in t or "Labels:" in t for t in texts)
    assert metrics == ["kube_pod_container_status_waiting_reason"]
