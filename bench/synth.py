"""A reproducible synthetic backlog for benchmarks: the fixture incidents, varied, at any size."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from oncall_memory.incident import Incident

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ENVS = ["shop-prod", "shop-staging", "payments-prod", "data-prod", "internal-prod", "eu-prod", "us-prod", "dev"]
FLAVORS = ["eks", "aks", "gke", "onprem"]
SERVICES = ["checkout", "orders", "search", "payments-api", "auth", "gateway", "inventory", "reporting",
            "notifications", "ingest-worker", "ledger", "catalog", "pricing", "shipping"]
EXTRA_NOTES = ["paged twice before ack", "happened during a deploy freeze", "customer-facing for 10 minutes",
               "seen right after the weekly batch", "second occurrence this month", "noisy alert, real impact",
               "escalated to the platform team", "followed a config change", "correlated with a traffic spike"]


def synthetic_incidents(n: int, seed: int = 7) -> list[Incident]:
    return [Incident.model_validate(row) for row in synthetic_rows(n, seed)]


def synthetic_rows(n: int, seed: int = 7) -> list[dict]:
    """The backlog as the JSONL reader sees it: one dict per incident, not yet validated."""
    rng = random.Random(seed)
    base = [json.loads(line) for line in (FIXTURES / "incidents.jsonl").read_text().splitlines() if line.strip()]
    start = datetime(2023, 1, 1, tzinfo=timezone.utc)
    out = []
    for i in range(n):
        row = dict(rng.choice(base))
        opened = start + timedelta(minutes=rng.randrange(0, 60 * 24 * 365 * 4))
        row.update(
            id=f"SYN-{i:06d}",
            env=rng.choice(ENVS),
            flavor=rng.choice(FLAVORS),
            service=rng.choice(SERVICES),
            oncall_note=f"{row.get('oncall_note', '')} {rng.choice(EXTRA_NOTES)} (#{i})",
            opened_at=opened.isoformat(),
            resolved_at=(opened + timedelta(minutes=rng.randrange(5, 300))).isoformat(),
            url=f"https://example.pagerduty.com/incidents/SYN-{i:06d}",
        )
        out.append(row)
    return out


def sample_alerts() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((FIXTURES / "alerts").glob("*.json"))]
