"""Which labels of an alert give which of its facts (service, env, flavor, component tags), and reading them:
the default mapping (ONCALL_MEMORY_LABEL_FACTS overrides it) and `facts_from_labels`, shared by every pager
whose alerts carry labels (Alertmanager's labels, Opsgenie's details).

Facts found this way are soft preferences, never filters, and each keeps where it was found ("the
container label"), so a reason can say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Set
from functools import lru_cache
from typing import Any

from .noise import monitor_title, strip_noise

# The default label -> fact mapping (ONCALL_MEMORY_LABEL_FACTS overrides it). "pod" means the workload
# behind the pod's name (its replicaset hash and random suffix stripped); "node" gives the flavor.
LABEL_FACTS: dict[str, list[str]] = {
    "service": [
        "service",
        "app_kubernetes_io_name",
        "app",
        "container",
        "pod",
        "deployment",
        "statefulset",
        "daemonset",
        "job",
        "namespace",
    ],
    "env": ["env", "environment", "cluster", "namespace"],
    "flavor": ["flavor", "platform", "node"],
    "component_tags": ["component", "namespace"],
}


# Exporters whose name shows up in `job` and `service` labels of alerts about other things (with
# kube-prometheus, KubePodCrashLooping carries job="kube-state-metrics"): never the service at fault.
EXPORTERS = frozenset(
    {
        "kube-state-metrics",
        "node-exporter",
        "kubelet",
        "cadvisor",
        "apiserver",
        "kube-apiserver",
        "kube-proxy",
        "kube-scheduler",
        "kube-controller-manager",
        "prometheus",
        "prometheus-k8s",
        "alertmanager",
        "alertmanager-main",
        "blackbox-exporter",
        "blackbox",
        "prometheus-operator",
        "pushgateway",
        "kubernetes-pods",
        "kubernetes-nodes",
        "coredns",
        "kube-dns",
        "cert-manager",
        "kafka-exporter",
        "postgres-exporter",
        "mysqld-exporter",
        "redis-exporter",
        "elasticsearch-exporter",
        "rabbitmq-exporter",
    }
)
_ENV_LIKE = re.compile(r"(?:^|[-_.])(?:prod|production|staging|stage|stg|dev|development|qa|test|uat|sandbox)$", re.I)
# The node name's shape tells the managed Kubernetes flavor (the same shapes `noise.py` strips).
_NODE_FLAVORS = (
    (re.compile(r"^aks-", re.I), "aks"),
    (re.compile(r"^gke-", re.I), "gke"),
    (re.compile(r"^ip-\d+-\d+-\d+-\d+\.|\.compute\.internal$", re.I), "eks"),
)


# An exporter's name, or one of its pods' (the name, a dash and the pod's suffixes), in one match.
_EXPORTER = re.compile(rf"(?:{'|'.join(map(re.escape, sorted(EXPORTERS, key=len, reverse=True)))})(?:-|$)", re.I)
# Helm names them after the release. kube-prometheus-stack's own services are `<fullname>-operator`,
# `-prometheus`, `-alertmanager`, `-kubelet`, `-coredns` and so on, where the fullname holds
# "kube-prometheus" ("kube-prometheus-stack", or "prometheus-kube-prometheus" for a release named
# prometheus). Its subcharts' are `<release>-kube-state-metrics` and `<release>-prometheus-node-exporter`.
# So with the chart most clusters run, KubePodCrashLooping carries
# service="kube-prometheus-stack-kube-state-metrics", which read as the service at fault. After a dash, only
# the names no workload of a team's own would carry are read as an exporter's.
_RELEASED = frozenset(
    {name for name in EXPORTERS if name.endswith("-exporter")}
    | {"kube-state-metrics", "kubelet", "cadvisor", "kube-apiserver", "kube-proxy", "kube-scheduler"}
    | {"kube-controller-manager", "kube-etcd", "prometheus-operator", "pushgateway"}
)
_RELEASE_NAMED = re.compile(
    rf"(?:^|-)kube-prometheus(?:-|$)|-(?:{'|'.join(map(re.escape, sorted(_RELEASED, key=len, reverse=True)))})(?:-|$)",
    re.I,
)


def is_exporter(value: str) -> bool:
    """An exporter's (or the monitoring stack's own) service, job or pod name: never the service at fault."""
    # Grafana Alloy names its jobs by path (job=".../kubernetes/kube-state-metrics", ".../node_exporter"), the
    # Prometheus Operator a PodMonitor's by namespace (monitoring/...), and plain configs often spell a job
    # with underscores (node_exporter).
    name = value.rsplit("/", 1)[-1].replace("_", "-")
    return _EXPORTER.match(name) is not None or _RELEASE_NAMED.search(name) is not None


# Datadog's Agent tags Kubernetes workloads by its own names (its "Kubernetes tag extraction" list);
# read as the labels Prometheus would give the same things. Any other tag is read under its own key.
_DATADOG_TAGS = {
    "kube_deployment": "deployment",
    "kube_stateful_set": "statefulset",
    "kube_daemon_set": "daemonset",
    "kube_namespace": "namespace",
    "kube_cluster_name": "cluster",
    "kube_container_name": "container",
    "container_name": "container",
    "pod_name": "pod",
}


def tag_labels(tags: str) -> dict[str, str]:
    """The labels in a Datadog monitor title's tags (`service:checkout,env:prod,kube_namespace:shop`): each
    `key:value` by the label name Prometheus would give it. A key given twice keeps its first value."""
    labels: dict[str, str] = {}
    for tag in tags.split(","):
        key, colon, value = tag.strip().partition(":")
        if colon and key and value.strip():
            labels.setdefault(_DATADOG_TAGS.get(key.strip(), key.strip()), value.strip())
    return labels


def monitor_tags(title: str) -> dict[str, str]:
    """The labels a Datadog monitor's title names (`[P2] [Triggered on {env:prod}] Name`), or none: read the
    same wherever such a title arrives (a PagerDuty incident, its history, an Opsgenie message)."""
    monitor = monitor_title(title)
    return tag_labels(monitor[1]) if monitor and monitor[1] else {}


# A storm's ten thousand alerts repeat their label values (a namespace, a cluster, a job): each is read once.
@lru_cache(maxsize=4096)
def _value_for(fact: str, label: str, value: str) -> str | None:
    """The fact a label's value gives, or None when it gives none (an exporter's name, a namespace that
    is not an env, a node name of no known flavor)."""
    value = value.strip()
    if not value:
        return None
    if fact == "service":
        # An exporter's own pod (node-exporter-7xk2p) is named before its suffix is stripped: stripped first,
        # it read as "node".
        if is_exporter(value):
            return None
        if label == "pod":
            value = strip_noise(value)  # checkout-6c9d7f-abcde -> checkout
        return None if is_exporter(value) else value
    if fact == "env" and label == "namespace":
        return value if _ENV_LIKE.search(value) else None
    if fact == "flavor" and label == "node":
        return next((flavor for pattern, flavor in _NODE_FLAVORS if pattern.search(value)), None)
    return value


def _as_set(values: Iterable[str]) -> Set[str]:
    # The memory's known values are a set already: copied for every alert of a storm, thousands of services
    # cost more than the alert.
    return values if isinstance(values, (set, frozenset)) else set(values)


def facts_from_labels(
    labels: Mapping[str, Any],
    mapping: Mapping[str, list[str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, Any]:
    """The alert facts (service, env, flavor, component_tags) the labels give, with `fact_sources` saying
    which label each came from. Of the labels that give a fact, the first whose value the memory knows
    (`known`: a container "worker" in namespace "notifications") wins, else the first."""
    facts: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for fact, names in (mapping or LABEL_FACTS).items():
        found = []
        for name in names:
            given = labels.get(name)
            if isinstance(given, str) and (v := _value_for(fact, name, given)):
                found.append((name, v))
        if not found:
            continue
        if fact == "component_tags":
            facts[fact] = list(dict.fromkeys(v for _, v in found))
        elif len(found) == 1:
            facts[fact], sources[fact] = found[0][1], f"{found[0][0]} label"
        else:
            familiar = _as_set((known or {}).get(fact, ()))
            name, value = next(((n, v) for n, v in found if v in familiar), found[0])
            facts[fact], sources[fact] = value, f"{name} label"
    if sources:
        facts["fact_sources"] = sources
    return facts
