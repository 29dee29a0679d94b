"""A reproducible synthetic backlog for benchmarks: the fixture incidents, varied, at any size."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from oncall_memory.domain.incident import Incident

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ENVS = ["shop-prod", "shop-staging", "payments-prod", "data-prod", "internal-prod", "eu-prod", "us-prod", "dev"]
FLAVORS = ["eks", "aks", "gke", "onprem"]
SERVICES = [
    "checkout",
    "orders",
    "search",
    "payments-api",
    "auth",
    "gateway",
    "inventory",
    "reporting",
    "notifications",
    "ingest-worker",
    "ledger",
    "catalog",
    "pricing",
    "shipping",
]
EXTRA_NOTES = [
    "paged twice before ack",
    "happened during a deploy freeze",
    "customer-facing for 10 minutes",
    "seen right after the weekly batch",
    "second occurrence this month",
    "noisy alert, real impact",
    "escalated to the platform team",
    "followed a config change",
    "correlated with a traffic spike",
]


def synthetic_incidents(n: int, seed: int = 7) -> list[Incident]:
    return [Incident.model_validate(row) for row in synthetic_rows(n, seed)]


def fixture_rows() -> list[dict]:
    """The shipped incidents, the pattern every synthetic backlog is drawn from."""
    return [json.loads(line) for line in (FIXTURES / "incidents.jsonl").read_text().splitlines() if line.strip()]


def synthetic_rows(n: int, seed: int = 7) -> list[dict]:
    """The backlog as the JSONL reader sees it: one dict per incident, not yet validated."""
    rng = random.Random(seed)
    base = fixture_rows()
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


# -- a varied backlog, for measuring search quality at scale ----------------------------------------
# `synthetic_rows` repeats 64 stories word for word, so its vectors sit in 64 tight knots: no test of an
# approximate index. `varied_rows` keeps the 64 kinds of problem but rewords each incident (its service
# named in the text, synonyms, different numbers, a different opening and closing, extra context), the
# way a team's real history of one kind of incident reads.

_SYNONYMS = {
    "pods": ["pods", "containers", "replicas", "instances", "workers"],
    "crash": ["crash", "die", "fail", "exit"],
    "crashing": ["crashing", "dying", "failing", "exiting"],
    "restarted": ["restarted", "bounced", "recycled", "rolled"],
    "restart": ["restart", "bounce", "recycle", "roll"],
    "timeout": ["timeout", "time-out", "timed out", "deadline exceeded"],
    "timeouts": ["timeouts", "time-outs", "deadline errors", "slow responses"],
    "errors": ["errors", "failures", "5xx responses", "exceptions"],
    "database": ["database", "DB", "Postgres", "primary"],
    "deploy": ["deploy", "deployment", "release", "rollout"],
    "release": ["release", "deploy", "rollout", "version"],
    "after": ["after", "right after", "following", "shortly after"],
    "high": ["high", "elevated", "spiking", "very high"],
    "full": ["full", "at 100%", "out of space", "exhausted"],
    "down": ["down", "unreachable", "offline", "not responding"],
    "slow": ["slow", "sluggish", "degraded", "lagging"],
}
_OPENINGS = [
    "",
    "",
    "",
    "[P1] ",
    "[P2] ",
    "Sev2: ",
    "Sev1: ",
    "URGENT ",
    "Again: ",
    "Prod: ",
    "Alert: ",
    "Customer impact: ",
    "Paging: ",
]
_CLOSINGS = [
    "",
    "",
    "",
    " again",
    " (recurring)",
    " during peak traffic",
    " overnight",
    " in {env}",
    " on {flavor}",
    " after the weekend",
    " during the batch window",
    " for {service}",
]
_CONTEXT = [
    "Started at the top of the hour.",
    "Two teams were paged.",
    "The dashboard lagged by several minutes.",
    "Only one availability zone was affected.",
    "It resolved briefly, then came back.",
    "Synthetic checks caught it before customers did.",
    "The on-call was mid-handover.",
    "A similar page fired last month.",
    "Error budget burn was {n}x normal.",
    "Latency p99 reached {n} seconds.",
    "Roughly {n} percent of requests failed.",
    "About {n} pods were affected.",
    "It lasted {n} minutes.",
    "Rollback was discussed but not needed.",
    "The runbook was out of date.",
    "Status page updated after {n} minutes.",
    "The vendor confirmed nothing on their side.",
    "Traffic was {n} percent above the weekly average.",
    "Autoscaler hit its maximum of {n} nodes.",
    "A canary had passed an hour earlier.",
    "Logs were noisy with unrelated warnings.",
    "Metrics showed a sawtooth pattern.",
    "The incident commander asked for a timeline.",
    "Two alerts fired for the same cause.",
]


def _reword(text: str, rng: random.Random, service: str, base_service: str) -> str:
    words = []
    for word in text.replace(base_service, service).split(" "):
        bare = word.strip(",.;:()").lower()
        if bare in _SYNONYMS and rng.random() < 0.6:
            word = word.replace(word.strip(",.;:()"), rng.choice(_SYNONYMS[bare]))
        words.append(word)
    out = " ".join(words)
    return "".join(str(rng.randrange(10)) if ch.isdigit() and rng.random() < 0.5 else ch for ch in out)


def varied_rows(n: int, seed: int = 11) -> list[dict]:
    rng = random.Random(seed)
    base = fixture_rows()
    start = datetime(2022, 1, 1, tzinfo=timezone.utc)
    out = []
    for i in range(n):
        row = dict(rng.choice(base))
        service, env, flavor = rng.choice(SERVICES), rng.choice(ENVS), rng.choice(FLAVORS)
        fill = {"env": env, "flavor": flavor, "service": service}
        opened = start + timedelta(minutes=rng.randrange(0, 60 * 24 * 365 * 5))
        context = " ".join(
            c.replace("{n}", str(rng.randrange(2, 95))) for c in rng.sample(_CONTEXT, rng.randrange(0, 3))
        )
        row.update(
            id=f"VAR-{i:07d}",
            title=(
                rng.choice(_OPENINGS)
                + _reword(row["title"], rng, service, row["service"])
                + rng.choice(_CLOSINGS).format(**fill)
            ),
            root_cause=_reword(row.get("root_cause") or "", rng, service, row["service"]) or None,
            error_signature=_reword(row.get("error_signature") or "", rng, service, row["service"]) or None,
            oncall_note=(_reword(row.get("oncall_note") or "", rng, service, row["service"]) + " " + context).strip()
            or None,
            service=service,
            env=env,
            flavor=flavor,
            opened_at=opened.isoformat(),
            resolved_at=(opened + timedelta(minutes=rng.randrange(5, 300))).isoformat(),
            url=f"https://example.pagerduty.com/incidents/VAR-{i:07d}",
        )
        out.append(row)
    return out
