"""Alerts as they really arrive: facts found in labels (with where they were found), pager ceremony
stripped, the ops vocabulary telling the same symptom said many ways."""

import json

import pytest
from conftest import FIXTURES, ROOT, make_incident

from oncall_memory.domain.alert import Alert
from oncall_memory.domain.distill import distill_alert
from oncall_memory.domain.label_facts import facts_from_labels
from oncall_memory.domain.noise import strip_ceremony
from oncall_memory.domain.vocabulary import symptoms
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.integrations.alertmanager.webhook import AMAlert, alertmanager_alert
from oncall_memory.integrations.opsgenie.webhook import OGAlert, opsgenie_alert
from oncall_memory.integrations.pagerduty.webhook import PDIncident, pagerduty_alert
from oncall_memory.memory import Memory
from oncall_memory.settings import Settings
from oncall_memory.store.engines import open_store

CRASHLOOP = {
    "alertname": "KubePodCrashLooping",
    "pod": "checkout-6c9d7f-abcde",
    "container": "checkout",
    "namespace": "shop",
    "cluster": "shop-prod",
    "job": "kube-state-metrics",
    "service": "kube-state-metrics",
    "severity": "warning",
    "node": "ip-10-0-1-23.eu-west-1.compute.internal",
}


def test_facts_come_from_the_labels_that_name_the_workload_not_the_exporter():
    facts = facts_from_labels(CRASHLOOP)
    assert (facts["service"], facts["env"], facts["flavor"]) == ("checkout", "shop-prod", "eks")
    assert facts["fact_sources"] == {"service": "container label", "env": "cluster label", "flavor": "node label"}
    assert facts["component_tags"] == ["shop"]


@pytest.mark.parametrize(
    "labels,service,source",
    [
        ({"pod": "orders-api-5c8d7f9b6-qw7rt", "job": "kube-state-metrics"}, "orders-api", "pod label"),
        ({"app_kubernetes_io_name": "search", "container": "es"}, "search", "app_kubernetes_io_name label"),
        ({"job": "payments-api"}, "payments-api", "job label"),
        ({"job": "node-exporter", "service": "kubelet"}, None, None),
        # An exporter's own pod: its name is read before the pod suffix is stripped ("node", before).
        ({"pod": "node-exporter-7xk2p", "job": "node-exporter"}, None, None),
        ({"pod": "kube-state-metrics-6d4b8c7f9-zq2lm"}, None, None),
        (
            {"pod": "node-exporter-7xk2p", "container": "node-exporter", "namespace": "billing"},
            "billing",
            "namespace label",
        ),
        # kube-prometheus-stack, the Helm chart, names its exporters after the release (labels as its
        # Prometheus scrapes them: service="kube-prometheus-stack-kube-state-metrics", job="kube-state-metrics").
        (
            {
                "container": "checkout",
                "job": "kube-state-metrics",
                "namespace": "shop",
                "pod": "checkout-7d9f8b6c4-x2kq9",
                "service": "kube-prometheus-stack-kube-state-metrics",
            },
            "checkout",
            "container label",
        ),
        ({"service": "kube-prometheus-stack-kube-state-metrics", "namespace": "shop"}, "shop", "namespace label"),
        ({"service": "prometheus-kube-prometheus-kubelet", "job": "kubelet"}, None, None),
        ({"service": "kube-prometheus-stack-operator", "job": "kube-prometheus-stack-operator"}, None, None),
        (
            {"pod": "kube-prometheus-stack-prometheus-node-exporter-86bmx", "namespace": "monitoring"},
            "monitoring",
            "namespace label",
        ),
        ({"pod": "mon-kube-state-metrics-ccfd46ddb-68lj2"}, None, None),
        # A workload's own alert from kube-state-metrics (KubeDeploymentReplicasMismatch): the metric names the
        # deployment; the pod and container are the exporter's, from its scrape.
        (
            {
                "container": "kube-state-metrics",
                "deployment": "checkout",
                "job": "kube-state-metrics",
                "namespace": "shop",
                "pod": "kube-prometheus-stack-kube-state-metrics-ccfd46ddb-68lj2",
                "service": "kube-prometheus-stack-kube-state-metrics",
            },
            "checkout",
            "deployment label",
        ),
        # Grafana Alloy's jobs are paths, and plain configs spell them with underscores.
        ({"job": "integrations/kubernetes/kubelet", "namespace": "shop"}, "shop", "namespace label"),
        ({"job": "integrations/node_exporter"}, None, None),
        ({"job": "node_exporter"}, None, None),
        ({"job": "shop/checkout"}, "shop/checkout", "job label"),  # a PodMonitor's job: namespace/name
        # ... and nothing of a team's own that merely ends like one of the stack's own services.
        ({"service": "payments-operator"}, "payments-operator", "service label"),
        ({"service": "shop-prometheus-bridge"}, "shop-prometheus-bridge", "service label"),
    ],
)
def test_the_service_label_rules(labels, service, source):
    facts = facts_from_labels(labels)
    assert facts.get("service") == service
    assert facts.get("fact_sources", {}).get("service") == source


def test_a_label_the_memory_knows_wins_over_the_first_one():
    labels = {"container": "worker", "namespace": "notifications"}
    assert facts_from_labels(labels)["service"] == "worker"
    assert facts_from_labels(labels, known={"service": {"notifications"}})["service"] == "notifications"


@pytest.mark.parametrize(
    "namespace,env", [("checkout-prod", "checkout-prod"), ("shop", None), ("payments-staging", "payments-staging")]
)
def test_a_namespace_is_an_env_only_when_it_reads_like_one(namespace, env):
    assert facts_from_labels({"namespace": namespace}).get("env") == env


@pytest.mark.parametrize(
    "node,flavor",
    [("aks-nodepool1-31718369-vmss000002", "aks"), ("gke-data-pool-2b7f9e1c-x7k2", "gke"), ("worker-3", None)],
)
def test_the_node_name_tells_the_flavor(node, flavor):
    assert facts_from_labels({"node": node}).get("flavor") == flavor


def test_pagerduty_titles_from_alertmanager_lose_their_ceremony_and_keep_their_facts():
    incident = PDIncident(
        id="Q1",
        title="[FIRING:1] KubePodCrashLooping (checkout shop-prod shop warning)",
        service={"summary": "Kubernetes"},
        incident_key="d3640fbd41094207a1c11e58e46b1662",
    )
    alert = pagerduty_alert(incident, known={"service": {"checkout"}, "env": {"shop-prod"}})
    assert alert.text == "KubePodCrashLooping"
    assert (alert.service, alert.env) == ("checkout", "shop-prod")
    assert alert.fact_sources == {"service": "alert's labels in the title", "env": "alert's labels in the title"}
    # A 32-hex dedup key is an identity, not a secret (hex is one case: the entropy check leaves it).
    assert alert.signature == "d3640fbd41094207a1c11e58e46b1662"


# Datadog's title for a monitor's notification, as its PagerDuty and Opsgenie integrations carry it: the
# monitor's priority, the transition and (`include_tags`, the default) the triggering group's tags.
DATADOG_TITLE = "[P2] [Triggered on {service:checkout,env:prod,kube_namespace:shop}] Checkout p99 latency above 2s"


def test_pagerduty_titles_from_a_datadog_monitor_lose_their_ceremony_and_read_its_tags():
    incident = PDIncident(id="Q1", title=DATADOG_TITLE, service={"summary": "Checkout Team"})
    alert = pagerduty_alert(incident)
    assert alert.text == "Checkout p99 latency above 2s"
    # PagerDuty's service (what the memory's PagerDuty history carries) stays unless the memory knows the tag's.
    assert (alert.service, alert.env, alert.component_tags) == ("Checkout Team", "prod", ["shop"])
    assert alert.fact_sources == {"service": "PagerDuty service", "env": "env tag in the title"}
    known = pagerduty_alert(incident, known={"service": {"checkout"}})
    assert known.service == "checkout" and known.fact_sources["service"] == "service tag in the title"
    both = pagerduty_alert(incident, known={"service": {"checkout", "Checkout Team"}})
    assert both.service == "Checkout Team"
    bare = pagerduty_alert(PDIncident(id="Q2", title="[Re-Triggered] Checkout p99 latency above 2s"))
    assert bare.text == "Checkout p99 latency above 2s" and bare.service is None


def test_opsgenie_reads_a_datadog_monitors_tags_after_its_details():
    alert = opsgenie_alert(
        OGAlert(
            alertId="a2",
            message=DATADOG_TITLE.replace("service:checkout,", "kube_deployment:checkout-api,"),
            details={"env": "shop-prod"},
        )
    )
    assert (alert.service, alert.env) == ("checkout-api", "shop-prod")
    assert alert.fact_sources == {"service": "deployment tag in the message", "env": "env label"}
    assert distill_alert(alert.text).startswith("Checkout p99 latency above 2s")


def test_a_secret_in_a_dedup_key_becomes_a_keyed_marker_that_is_still_an_identity():
    key = "deploy-ghp_" + "a1B2c3D4e5" * 4
    alert = pagerduty_alert(PDIncident(id="Q1", title="x", incident_key=key))
    assert alert.signature.startswith("deploy-[REDACTED:") and "a1B2c3D4e5" not in alert.signature
    other = pagerduty_alert(PDIncident(id="Q3", title="x", incident_key=key.replace("a1B2", "z9Y8")))
    again = pagerduty_alert(PDIncident(id="Q4", title="y", incident_key=key))
    assert other.signature != alert.signature == again.signature


def test_an_incident_key_pins_the_pagerduty_history_of_the_same_alert():
    key = "d3640fbd41094207a1c11e58e46b1662"
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), Settings(data_dir=":memory:"))
    memory.ingest(
        [make_incident(id=f"N{i}", title=f"queue lag {i}") for i in range(8)]
        + [make_incident(id="SAME", source="pagerduty", title="words unlike the alert", signature=key)]
    )
    alert = pagerduty_alert(
        PDIncident(id="Q2", title="[FIRING:1] KafkaConsumergroupLag (orders shop-prod)", incident_key=key)
    )
    lookup = memory.similar(alert, limit=3)
    assert lookup.neighbours[0].id == "SAME" and lookup.neighbours[0].reasons[0] == "exact signature match"


def test_opsgenie_entity_tags_and_details_are_facts():
    alert = opsgenie_alert(
        OGAlert(
            alertId="a1",
            message="Registry pulls failing",
            entity="search",
            tags=["images"],
            details={"cluster": "shop-staging", "priority": "P3"},
        )
    )
    assert (alert.service, alert.env, alert.component_tags) == ("search", "shop-staging", ["images"])
    assert alert.fact_sources == {"service": "Opsgenie entity", "env": "cluster label"}


def test_an_alertmanager_alert_reads_name_summary_and_description():
    a = AMAlert(
        status="firing",
        labels=CRASHLOOP,
        startsAt="2026-11-29T03:10:00Z",
        fingerprint="f",
        annotations={
            "summary": "Pod is crash looping.",
            "description": "Pod shop/checkout-6c9d7f-abcde (checkout) "
            'is in waiting state (reason: "CrashLoopBackOff").',
        },
    )
    alert = alertmanager_alert(a)
    assert alert.text.startswith("KubePodCrashLooping - Pod is crash looping. - Pod shop/checkout")
    assert alert.service == "checkout"


@pytest.mark.parametrize(
    "text",
    [
        "[FIRING:3] KubeNodeNotReady (shop-prod kube-state-metrics critical)",
        "KubeNodeNotReady\nLabels:\n - alertname = KubeNodeNotReady\n - cluster = shop-prod\nSource: http://prometheus:9090/graph?g0=x",
    ],
)
def test_ceremony_is_stripped(text):
    assert strip_ceremony(text) == "KubeNodeNotReady"
    assert distill_alert(text) == "KubeNodeNotReady"


@pytest.mark.parametrize(
    "text,symptom",
    [
        ("Last State: Terminated Reason: OOMKilled Exit Code: 137", "oom_kill"),
        ("container keeps getting killed for going over its memory allowance", "oom_kill"),
        ("exit code 137", "oom_kill"),
        ("Back-off restarting failed container", "crash_loop"),
        ("pods in CrashLoopBackOff", "crash_loop"),
        ("checkout pods restarting constantly after release", "crash_loop"),  # how often, as people say it
        ("Pod has restarted too many times", "crash_loop"),
        ("containers exit with code 1 at boot", "crash_loop"),
        ("x509: certificate has expired or is not yet valid", "cert_expiry"),
        ("dial udp 10.96.0.10:53: i/o timeout", "dns"),
        ("lookup api.fraud.example: NXDOMAIN", "dns"),
        ("SERVFAIL from upstream", "dns"),
        ("nslookup: can't resolve 'kubernetes.default'", "dns"),  # busybox
        (";; connection timed out; no servers could be reached", "dns"),  # dig, bind's nslookup
        ("** server can't find api.internal: REFUSED", "dns"),
        ("curl: (6) Could not resolve host: payments.internal", "dns"),
        ("socket.gaierror: [Errno -3] Temporary failure in name resolution", "dns"),  # glibc EAI_AGAIN
        ("ssh: Could not resolve hostname bastion: Name or service not known", "dns"),
        ("FATAL: sorry, too many clients already", "conn_exhaustion"),
        ("The node was low on resource: ephemeral-storage", "disk_pressure"),
        ("node has condition DiskPressure", "disk_pressure"),
        ("PLEG is not healthy: pleg was last seen active 3m0s ago", "node_not_ready"),
        ("node ip-10-0-1-23 is NotReady", "node_not_ready"),
        ("Failed to pull image: ErrImagePull", "image_pull"),
        ("ImagePullBackOff", "image_pull"),
        ("Multi-Attach error for volume pvc-123", "volume_mount"),
        ("FailedMount: Unable to attach or mount volumes", "volume_mount"),
    ],
)
def test_the_vocabulary_tells_the_same_symptom_said_many_ways(text, symptom):
    assert symptom in symptoms(text)


@pytest.mark.parametrize(
    "text", ["restart the pod", "a restart may take minutes", "the job exits with code 1", "restarted once at 03:00"]
)
def test_a_restart_or_an_exit_alone_is_no_crash_loop(text):
    assert "crash_loop" not in symptoms(text)


def test_words_that_only_look_alike_are_not_a_symptom():
    for text in (
        "memory usage dashboard updated",
        "certificate rotation scheduled",
        "restarted once by hand",
        "disk benchmark results",
        "DNS record added for the new service",
        "Module not found: Error: Can't resolve './components/Cart'",  # webpack, not a resolver
        "Could not resolve dependencies for project shop:checkout:jar:4.12",  # Maven
    ):
        assert symptoms(text) == [] or text.startswith("DNS")  # a DNS record is still about DNS


def test_a_shared_symptom_is_a_reason_in_words():
    memory = Memory(open_store(Settings(data_dir=":memory:")), FakeEmbedder(), Settings(data_dir=":memory:"))
    memory.ingest([make_incident(id="OOM", title="checkout OOMKilled under load", service="checkout", env="shop-prod")])
    alert = Alert(text="resizer killed: exit code 137", service="checkout", fact_sources={"service": "container label"})
    (n,) = memory.similar(alert).neighbours
    assert "both are OOM kills" in n.reasons
    assert "same service (checkout), from the container label" in n.reasons


def test_the_shipped_pager_set_parses():
    from oncall_memory.evaluation import PagerQuery, read_labels

    queries = read_labels(ROOT / "oncall_memory" / "evalsets" / "alerts.jsonl")
    assert len(queries) >= 40 and all(isinstance(q, PagerQuery) for q in queries)
    assert {q.pager for q in queries} == {"alertmanager", "pagerduty", "opsgenie"}
    incidents = {json.loads(line)["id"] for line in (FIXTURES / "incidents.jsonl").read_text().splitlines()}
    assert all(set(q.relevant) <= incidents for q in queries)


def test_a_labelled_pager_alert_is_read_by_that_pagers_own_webhook_and_an_unknown_pager_is_named():
    """The evaluation reads a labelled alert as the service would (the pager's webhook, found through the
    hook); a pager no integration offers is refused, saying which there are."""
    import json

    from pydantic import ValidationError

    from oncall_memory.evaluation import PagerQuery
    from oncall_memory.memory import Memory
    from oncall_memory.settings import Settings

    with open("oncall_memory/evalsets/alerts.jsonl", encoding="utf-8") as fh:
        row = json.loads(fh.readline())  # KubePodCrashLooping for container checkout, as Alertmanager posts it
    memory = Memory.open(Settings(data_dir=":memory:", embedder="fake"))
    alert = PagerQuery.model_validate(row).alert(memory)
    assert alert.text.startswith("KubePodCrashLooping") and (alert.service, alert.env) == ("checkout", "shop-prod")
    with pytest.raises(ValidationError, match="no built-in pager 'nagios'.*alertmanager"):
        PagerQuery.model_validate({**row, "pager": "nagios"})
    memory.close()
