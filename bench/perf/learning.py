"""From `incident.resolved` to findable: how long after PagerDuty tells the service that an incident
closed does `/similar` return it, with each embedder.

    python -m bench.perf.learning [--runs 5]

The service runs in process against PagerDuty's REST API played on loopback (tests/pagerduty_fake.py);
each run resolves a new incident and polls `/similar` until it is there.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from pydantic import SecretStr
from pytest_httpserver import HTTPServer

from oncall_memory.memory import Memory
from oncall_memory.service import create_app
from oncall_memory.settings import Settings
from oncall_memory.sources.jsonl_files import read_jsonl

ROOT = Path(__file__).resolve().parents[2]
from pagerduty_fake import TOKEN, FakePagerDuty, pd_incident  # noqa: E402


def measure(embedder_name: str, runs: int) -> list[float]:
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    pagerduty = FakePagerDuty().install(server)
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp()),
        embedder=embedder_name,
        pagerduty_url=server.url_for(""),
        pagerduty_token=SecretStr(TOKEN),
        pagerduty_from_email="bench@acme.example",
    )
    took = []
    with Memory.open(settings) as memory:
        memory.ingest(read_jsonl(ROOT / "fixtures" / "incidents.jsonl"))
        getattr(memory.embedder, "load", lambda: None)()
        with TestClient(create_app(settings, memory=memory)) as client:
            for run in range(runs):
                incident_id = f"PBENCH{run}"
                title = f"Search shard {run} rejecting writes: circuit breaker tripped on field data"
                pagerduty.incidents.append(pd_incident(900 + run, id=incident_id, title=title))
                pagerduty.notes[incident_id] = [
                    {
                        "id": f"N{run}",
                        "created_at": "2026-11-28T04:00:00Z",
                        "content": "Root cause: fielddata on a text field\nFix: map it as keyword => resolved",
                    }
                ]
                started = time.perf_counter()
                client.post(
                    "/webhooks/pagerduty",
                    json={"event": {"id": f"E{run}", "event_type": "incident.resolved", "data": {"id": incident_id}}},
                )
                while not any(n["id"] == incident_id for n in client.get("/similar", params={"text": title}).json()):
                    time.sleep(0.005)
                took.append(time.perf_counter() - started)
    server.stop()
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print("incident.resolved webhook -> returned by /similar (in-process service, PagerDuty fake on loopback)")
    for name in ("fake", "local"):
        took = measure(name, args.runs)
        print(
            f"{name:>5} embedder: median {statistics.median(took) * 1000:.0f} ms, max {max(took) * 1000:.0f} ms "
            f"over {len(took)} incidents"
        )


if __name__ == "__main__":
    main()
