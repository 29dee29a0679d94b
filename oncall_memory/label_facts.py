"""Which labels of an alert give which of its facts, by default: data, shared by the settings (which let
ONCALL_MEMORY_LABEL_FACTS override it) and `pagers.py` (which reads labels with it)."""

from __future__ import annotations

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
