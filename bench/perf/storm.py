"""An outage's alert storm, through the real service (in process) to a Slack fake on loopback.

    python -m bench.perf.storm [--incidents 100000] [--storms 1000 10000] [--group-key] [--shape kube-prometheus]

Builds an embedded store of the varied synthetic backlog (fake embedder, 1536 dims, indexed), then for each
storm size posts one Alertmanager webhook of that many distinct alerts (different rules, pods, wording), as
some senders and proxies post them: without a `groupKey` unless `--group-key`. Prints per storm: the
body's size, time to the 202, how much the data dir grew, and how long until every alert of it was
answered (looked up and its message posted). `--shape kube-prometheus`: alerts as kube-prometheus's
KubePodCrashLooping renders them with a cluster's usual target labels (a pod's uid, its instance, the
generator URL's PromQL), about 1 KB each, 10 MB for 10,000.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
import tempfile
import time
import uuid
from pathlib import Path

from fastapi.testclient import TestClient
from pydantic import SecretStr
from pytest_httpserver import HTTPServer
from synth import varied_rows

from oncall_memory.domain.incident import Incident
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.service.app import long_lived
from oncall_memory.settings import Settings

DIM = 1536
RULES = ["KubePodCrashLooping", "KubeDeploymentReplicasMismatch", "TargetDown", "NodeFilesystemSpaceFillingUp"]
SYMPTOMS = [
    "pods crash looping after the deploy",
    "readiness probe failing, deployment not available",
    "scrape target down, connection refused",
    "disk filling up on the node, predicted full in 4h",
    "p99 latency over SLO on the checkout path",
    "5xx ratio above 5% at the ingress",
]


def storm(n: int, group_key: bool, seed: int) -> dict:
    """An Alertmanager post of `n` distinct firing alerts."""
    alerts = [
        {
            "status": "firing",
            "labels": {
                "alertname": RULES[i % len(RULES)],
                "namespace": f"team-{i % 40}",
                "pod": f"svc-{i % 97}-7d9c8-{seed}x{i:05d}",
                "severity": "critical",
                "cluster": f"prod-{i % 3}",
            },
            "annotations": {
                "summary": f"{SYMPTOMS[i % len(SYMPTOMS)]} (svc-{i % 97})",
                "description": f"svc-{i % 97} in team-{i % 40}: {SYMPTOMS[(i * 7) % len(SYMPTOMS)]}",
            },
            "startsAt": "2026-11-30T03:11:00Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.example:9090/graph",
            "fingerprint": f"{seed:02x}{i:014x}",
        }
        for i in range(n)
    ]
    body: dict = {"version": "4", "status": "firing", "receiver": "oncall-memory", "alerts": alerts}
    body["groupLabels"] = {}
    if group_key:
        body["groupKey"] = f'{{}}:{{storm="{seed}"}}'
    return body


GENERATOR = (
    "http://prometheus-k8s-0:9090/graph?g0.expr=max_over_time%28kube_pod_container_status_waiting_reason%7Breason"
    "%3D%22CrashLoopBackOff%22%2C+job%3D%22kube-state-metrics%22%7D%5B5m%5D%29+%3E%3D+1&g0.tab=1"
)


def kube_storm(n: int, group_key: bool, seed: int) -> dict:
    """An Alertmanager post of `n` distinct KubePodCrashLooping alerts as kube-prometheus renders them."""
    alerts = []
    for i in range(n):
        r = random.Random(seed * 1_000_003 + i)
        namespace, app = f"team-{i % 40}", f"svc-{i % 97}"
        pod = f"{app}-{r.getrandbits(40):010x}-{r.getrandbits(20):05x}"
        labels = {
            "alertname": "KubePodCrashLooping",
            "container": app,
            "endpoint": "http",
            "instance": f"10.{i % 250}.{(i // 250) % 250}.{i % 7}:8080",
            "job": "kube-state-metrics",
            "namespace": namespace,
            "pod": pod,
            "prometheus": "monitoring/k8s",
            "reason": "CrashLoopBackOff",
            "service": "kube-state-metrics",
            "severity": "warning",
            "uid": str(uuid.UUID(int=r.getrandbits(128))),
            "cluster": f"prod-{i % 3}",
        }
        annotations = {
            "description": f'Pod {namespace}/{pod} ({app}) is in waiting state (reason: "CrashLoopBackOff").',
            "runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping",
            "summary": "Pod is crash looping.",
        }
        alerts.append(
            {
                "status": "firing",
                "labels": labels,
                "annotations": annotations,
                "startsAt": "2026-11-30T03:11:00.123Z",
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": GENERATOR,
                "fingerprint": f"{r.getrandbits(64):016x}",
            }
        )
    body: dict = {"version": "4", "status": "firing", "receiver": "oncall-memory", "alerts": alerts}
    body["groupLabels"] = {"alertname": "KubePodCrashLooping"}
    if group_key:
        body["groupKey"] = f'{{}}:{{alertname="KubePodCrashLooping",storm="{seed}"}}'
    return body


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=100_000)
    ap.add_argument("--storms", type=int, nargs="+", default=[1000, 10_000])
    ap.add_argument("--group-key", action="store_true", help="post with a groupKey (Alertmanager's own way)")
    ap.add_argument("--shape", choices=("varied", "kube-prometheus"), default="varied")
    args = ap.parse_args()
    logging.disable(logging.INFO)  # a line per alert and delivery otherwise
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    server.expect_request(re.compile("^/slack"), method="POST").respond_with_data("ok")
    data = Path(tempfile.mkdtemp(prefix="storm-"))
    settings = Settings(
        data_dir=data,
        embedder="fake",
        embed_dim=DIM,
        embed_batch_size=256,
        max_body_bytes=64 << 20,  # a 10,000-alert post is ~5 MB: the limit a team expecting storms sets
        slack_webhook_url=SecretStr(server.url_for("/slack/storm")),
    )
    embedder = FakeEmbedder(dimension=DIM)
    started = time.perf_counter()
    with Memory.open(settings, embedder=embedder) as memory:
        memory.ingest([Incident.model_validate(r) for r in varied_rows(args.incidents)])
        memory.build_index(force=True)
    print(f"{args.incidents} incidents ingested and indexed in {time.perf_counter() - started:.0f} s")
    print(f"{'alerts':>7} {'body MB':>8} {'202 after':>10} {'dir grew':>9} {'all answered':>13}")
    with (
        Memory.open(settings, embedder=embedder) as memory,
        TestClient(served := create_app(settings, memory=memory)) as client,
    ):
        long_lived()  # as `serve` does once it has started
        for seed, n in enumerate(args.storms, start=1):
            make = kube_storm if args.shape == "kube-prometheus" else storm
            body = json.dumps(make(n, args.group_key, seed)).encode()
            before = dir_bytes(data)
            posted = time.perf_counter()
            answer = client.post("/webhooks/alertmanager", content=body, headers={"content-type": "application/json"})
            acked = time.perf_counter() - posted
            grew = dir_bytes(data) - before
            if answer.status_code != 202:
                raise SystemExit(f"{n}-alert storm: {answer.status_code} {answer.text[:200]}")
            if not served.state.dispatcher.join(3600):
                raise SystemExit(f"{n}-alert storm: not all answered within an hour")
            answered = time.perf_counter() - posted
            print(f"{n:>7} {len(body) / 2**20:>8.1f} {acked:>9.2f}s {grew / 2**20:>7.1f}MB {answered:>12.1f}s")
    server.stop()


if __name__ == "__main__":
    main()
