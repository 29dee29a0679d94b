"""Which symptom an incident tells of by its meaning, not only by the vocabulary's words (issue 82).

Where it happened counts for a candidate only when it tells of the alert's symptom, if any candidate does
(`ranking`, `facts_where="symptom"`). Read from the vocabulary's words alone, the same service's crash loop
told in other words ("containers keep terminating during boot") lost its facts to another service's
CrashLoopBackOff. So each symptom also has a handful of prototype tellings (`PROTOTYPES`, written for this,
not taken from any evaluation set), and a candidate tells of a symptom when its meaning stands as near to
their centroid as the memory's own tellings of it do:

- measured with the memory's scale (`scale.measure`): each symptom's centroid (the prototypes embedded as
  alerts are), and its reach, the lower quartile of how near the centroid stands the sampled incidents whose
  words tell of it (at least `MIN_TOLD` of them; a symptom the memory barely tells of gets no reach);
- read at lookup for the alert's own symptoms only, by one engine call each over the candidates that do not
  already tell of it (`Retriever.search`).

The vocabulary still names the symptom in the reasons ("both are crash loops").
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..domain.vocabulary import BY_KEY

MIN_TOLD = 3  # incidents of a sample that must tell of a symptom by its words before its reach is measured
QUARTILE = 25  # the reach: this percentile of how near the memory's own tellings stand to the centroid

PROTOTYPES: dict[str, tuple[str, ...]] = {
    "oom_kill": (
        "container killed by the kernel for using more memory than its limit",
        "process terminated when the node ran out of memory",
        "memory usage grows until the pod is killed and restarted",
        "the worker was killed by the OOM killer under load",
    ),
    "crash_loop": (
        "the service exits right after it starts and is restarted again and again",
        "containers keep dying during boot and never stay up",
        "application fails on startup and the orchestrator keeps restarting it",
        "pods restart over and over, each time failing at launch",
    ),
    "not_ready": (
        "new pods start but never pass their health check and receive no traffic",
        "the rollout hangs because the replicas never report ready",
        "instances stay out of the load balancer, health checks failing",
        "deployment does not progress, pods are running but unhealthy",
    ),
    "cert_expiry": (
        "clients reject the connection because the TLS certificate is no longer valid",
        "the certificate ran past its end date and handshakes fail",
        "certificate renewal did not happen and the endpoint serves an old cert",
        "TLS errors after the server certificate lapsed",
    ),
    "dns": (
        "service names do not resolve and requests fail to find their backends",
        "name lookups time out intermittently across the cluster",
        "the resolver returns no answer for internal hostnames",
        "clients cannot resolve the database host name",
    ),
    "conn_exhaustion": (
        "all database connections in the pool are in use and new requests wait",
        "the server refuses new connections, its connection limit reached",
        "requests time out waiting for a free connection",
        "too many open connections to the backend",
    ),
    "disk_pressure": (
        "the volume is almost full and writes are failing",
        "no space left on the device holding the data",
        "disk usage keeps climbing until the filesystem fills",
        "the node evicts pods because its disk is nearly full",
    ),
    "node_not_ready": (
        "a worker machine stopped reporting to the control plane",
        "the host became unresponsive and its workloads were rescheduled",
        "kubelet on one node stopped sending heartbeats",
        "nodes drop out of the cluster and come back",
    ),
    "image_pull": (
        "the container image cannot be downloaded from the registry",
        "pods stay pending because fetching their image fails",
        "registry denies access when nodes pull the new release",
        "the image tag does not exist so the pull is refused",
    ),
    "volume_mount": (
        "pods cannot start because their storage volume fails to attach",
        "the persistent disk does not mount on the new node",
        "containers wait for a volume that never becomes available",
        "mounting the shared filesystem times out",
    ),
    "cpu_throttling": (
        "the container hits its CPU limit and its work is slowed down",
        "processes get throttled by the CPU quota and latency rises",
        "requests are slow because the service is starved of CPU time",
        "CPU limits too low, the runtime throttles the app",
    ),
    "quota": (
        "the account reached its resource limit and new resources are refused",
        "creating more instances fails because the quota is used up",
        "rate limit of the provider reached, calls rejected",
        "namespace resource quota exceeded, new pods forbidden",
    ),
    "consumer_lag": (
        "the queue consumers fall behind and messages pile up",
        "events wait longer and longer before being processed",
        "the stream backlog grows because processing is too slow",
        "subscribers cannot keep up with the incoming messages",
    ),
    "vpn_down": (
        "the encrypted link to the remote site is not established",
        "traffic to the partner network fails because the tunnel dropped",
        "site to site connection keeps renegotiating and dropping",
        "the IPsec peer does not answer and the link stays down",
    ),
}
assert set(PROTOTYPES) == set(BY_KEY), "every symptom of the vocabulary has its prototypes"


def prototype_texts() -> list[str]:
    """Every prototype, symptom by symptom in `PROTOTYPES`' order (embedded in one call with the scale's probes)."""
    return [t for texts in PROTOTYPES.values() for t in texts]


@dataclass(frozen=True)
class Told:
    """Each symptom's centroid (unit length) and reach, as measured in one memory."""

    centroids: Mapping[str, np.ndarray]
    reach: Mapping[str, float]

    def dump(self) -> str:
        return json.dumps(
            {
                k: [self.reach[k], base64.b64encode(np.asarray(self.centroids[k], dtype="<f4").tobytes()).decode()]
                for k in self.reach
            },
            sort_keys=True,
        )

    @classmethod
    def load(cls, text: str) -> Told:
        data: dict[str, Any] = json.loads(text) if text else {}
        centroids, reach = {}, {}
        for key, (near, packed) in data.items():
            vector = np.frombuffer(base64.b64decode(packed, validate=True), dtype="<f4")
            if key in BY_KEY and vector.size and isinstance(near, (int, float)):
                centroids[key], reach[key] = vector, float(near)
        return cls(centroids, reach)


NONE = Told({}, {})


def centroids(vectors: Sequence[Sequence[float]]) -> dict[str, np.ndarray]:
    """The prototypes' vectors (`prototype_texts` order) to one unit centroid a symptom."""
    out, at = {}, 0
    for key, texts in PROTOTYPES.items():
        block = np.asarray(vectors[at : at + len(texts)], dtype=np.float32)
        at += len(texts)
        block /= np.linalg.norm(block, axis=1, keepdims=True) + 1e-12
        mean = block.mean(axis=0)
        out[key] = mean / (np.linalg.norm(mean) + 1e-12)
    return out


def measure(found: dict[str, np.ndarray], sample: Iterable[tuple[Sequence[float], Iterable[str]]]) -> Told:
    """Each symptom's reach over a sample of the memory's incidents (their vectors, and the symptoms their
    words tell of): how near the centroid stands the lower quartile of those that tell of it."""
    near: dict[str, list[float]] = {k: [] for k in found}
    for vector, keys in sample:
        v = np.asarray(vector, dtype=np.float32)
        v = v / (np.linalg.norm(v) + 1e-12)
        for key in keys:
            if key in found:
                near[key].append(float(v @ found[key]))
    reach = {k: float(np.percentile(s, QUARTILE)) for k, s in near.items() if len(s) >= MIN_TOLD}
    return Told({k: found[k] for k in reach}, reach)
