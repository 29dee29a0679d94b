"""Head-of-line blocking, measured: a 1,000-alert Alertmanager group, then a PagerDuty incident right
behind it, through the real service (in process) to PagerDuty and Slack fakes on loopback.

    python -m bench.perf.deliveries [--alerts 1000] [--distinct 1]

Prints: time to the group's 202, messages posted for it, and how long the PagerDuty note queued behind
it took to arrive (webhook to note stored). `--distinct` sets how many different alerts the group holds
(a thousand pods of one deployment crash looping read the same once cleaned).
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from pydantic import SecretStr
from pytest_httpserver import HTTPServer

from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

ROOT = Path(__file__).resolve().parents[2]
from pagerduty_fake import TOKEN, FakePagerDuty, pd_incident  # noqa: E402


def _pod(i: int) -> str:
    """A pod name's random suffix as Kubernetes makes it: five characters of [a-z0-9]."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[(i // len(alphabet) ** k) % len(alphabet)] for k in range(5))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--alerts", type=int, default=1000)
    ap.add_argument("--distinct", type=int, default=1)
    args = ap.parse_args()
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    pagerduty = FakePagerDuty(incidents=[pd_incident(0, id="PBENCH1")]).install(server)
    server.expect_request(re.compile("^/slack"), method="POST").respond_with_data("ok")
    data = Path(tempfile.mkdtemp())
    settings = Settings(
        data_dir=data,
        embedder="fake",
        pagerduty_url=server.url_for(""),
        pagerduty_token=SecretStr(TOKEN),
        pagerduty_from_email="bench@acme.example",
        slack_webhook_url=SecretStr(server.url_for("/slack/x")),
    )
    base = json.loads((ROOT / "fixtures" / "webhooks" / "alertmanager-group.json").read_text())["alerts"][1]
    alerts = [
        {
            **base,
            "fingerprint": f"fp{i:05d}",
            "annotations": {
                "summary": f"pods crash looping ({i % args.distinct})"
                if args.distinct > 1
                else base["annotations"]["summary"],
                "description": f"Pod orders/orders-api-5c8d7f9b6-{_pod(i)} is restarting",
            },
        }
        for i in range(args.alerts)
    ]
    group = {
        "version": "4",
        "groupKey": '{}:{alertname="KubePodCrashLooping"}',
        "alerts": alerts,
        "groupLabels": {"alertname": "KubePodCrashLooping"},
    }
    hook = {"event": {"event_type": "incident.triggered", "data": {"id": "PBENCH1", "title": "IPsec tunnel down"}}}
    with Memory.open(settings, embedder=FakeEmbedder()) as memory:
        memory.ingest(read_jsonl(ROOT / "fixtures" / "incidents.jsonl"))
        app = create_app(settings, memory=memory)
        with TestClient(app) as client:
            started = time.perf_counter()
            assert client.post("/webhooks/alertmanager", json=group).status_code == 202
            group_202 = time.perf_counter() - started
            pd_sent = time.perf_counter()
            assert client.post("/webhooks/pagerduty", json=hook).status_code == 202
            while not pagerduty.posted_notes("PBENCH1"):
                time.sleep(0.005)
            note_after = time.perf_counter() - pd_sent
            app.state.dispatcher.join(120)
            everything = time.perf_counter() - started
    slack = [r for r, _ in server.log if r.path.startswith("/slack")]
    server.stop()
    print(f"{args.alerts}-alert Alertmanager group ({args.distinct} distinct), fake embedder, Edge, loopback fakes")
    print(
        f"group 202 after {group_202 * 1000:.0f} ms; Slack messages for it: {len(slack) - 1} "
        f"(plus 1 for the PagerDuty incident)"
    )
    print(
        f"PagerDuty note queued right behind it arrived {note_after * 1000:.0f} ms after its webhook; "
        f"all delivered after {everything:.2f} s"
    )


if __name__ == "__main__":
    main()
