"""What secret detection costs and what it catches, in one run.

    python -m bench.redaction.coverage [--incidents 10000] [--secret-share 0.02] [--before REV]

Prints, for the detectors now (and, with `--before REV`, for the detectors of that git revision, which
needs detect-secrets installed, as that revision did):
- cost per KB of clean on-call prose and of adversarial text (one keyword a rule looks for, repeated),
  at 10 KB and 100 KB: linear detectors cost the same per KB at both sizes;
- coverage of the tuned corpus (`tests/secret_corpus.py`) and of the hold-out corpus it was not tuned on;
- on real public incident text (`python -m bench.redaction.real_text` builds it), what was altered that is not a
  secret: records, links broken, words lost;
- the whole ingest of a synthetic backlog with and without redaction (the Edge store, a fake embedder);
- cost per byte of every detector fed its own example repeated, at 10 KB, 1 MB and 10 MB;
- precision on ops lines nobody here wrote (loghub's public logs) and on ids vendors document as public;
- recall on other catalogues' own examples (Kingfisher, gitleaks, detect-secrets: bench.redaction.catalogues).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from synth import synthetic_rows

from oncall_memory.domain import facts
from oncall_memory.domain.incident import Incident
from oncall_memory.embedders.fake import FakeEmbedder
from oncall_memory.memory import Memory
from oncall_memory.redact import engine, redact, redact_all
from oncall_memory.redact.catalogue import CATALOGUE
from oncall_memory.settings import Settings

from .real_text import DEFAULT_OUT as REAL_TEXT

ROOT = Path(__file__).resolve().parents[2]
from secret_corpus import corpus  # noqa: E402
from secret_holdout import holdout  # noqa: E402

PASTED = [
    "psql said password authentication failed; PGPASSWORD=Hx7uQ2mZp9LrT4vW was in the runbook",
    "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvbmNhbGwifQ.c2lnbmF0dXJlLWhlcmUtMTIz' worked",
    "the deploy key ghp_Zx8YwVu7TsRq6PoNm5LkJi4HgFe3DcBa2Q1w was rotated",
    "dd-agent: API Key invalid 3f8a9b2c4d5e6f708192a3b4c5d6e7f8",
]
CLEAN = (
    "checkout pods crash looping after the 1.24.3 deploy; readiness probe failed: HTTP probe failed with "
    "statuscode: 503; rolled back via argocd, see https://acme.pagerduty.com/incidents/Q0RIJJZL24RC6W. "
)
ADVERSARIAL = ["password ", "pwd", "redis-cli ", "mysql ", "AccountKey=", "data:", "pw: ", "token: ", "a://b:"]
URL = re.compile(r"https?://[^\s)\]>\"']+")
WORD = re.compile(r"\b[A-Za-z][a-z]{2,}\b")


def per_kb(scan: Callable[[str], object], unit: str, size: int) -> float:
    text = (unit * (size // len(unit) + 1))[:size]
    started = time.perf_counter()
    scan(text)
    return (time.perf_counter() - started) / (size / 1024)


def load_revision(rev: str) -> Callable[[str], str] | None:
    """The `redact` function of the detectors at git revision `rev`, or None when it cannot be loaded."""
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:oncall_memory/redact.py"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None
    path = Path(tempfile.mkdtemp()) / "redact_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("redact_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["redact_before"] = module
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        print(f"before ({rev}): not measured ({exc})")
        return None
    return module.redact


def caught(redact_fn: Callable[[str], str], shape) -> bool:
    out = redact_fn(shape.text)
    return not any(piece in out for secret in shape.secrets for piece in pieces(secret))


def pieces(secret: str) -> set[str]:
    """The secret, or for a long one its first, middle and last 12 characters: half a secret leaks too."""
    if len(secret) <= 12:
        return {secret}
    middle = len(secret) // 2 - 6
    return {secret[:12], secret[middle : middle + 12], secret[-12:]}


def altered(redact_fn: Callable[[str], str], rows: list[dict]) -> tuple[int, int, int]:
    records = links = words = 0
    for row in rows:
        text = row["text"]
        out = redact_fn(text)
        if out != text:
            records += 1
            links += sum(1 for u in URL.findall(text) if u not in URL.findall(out))
            words += max(0, len(WORD.findall(text)) - len(WORD.findall(out.replace("[REDACTED]", ""))))
    return records, links, words


def report(label: str, redact_fn: Callable[[str], str], adversarial_sizes: tuple[int, ...]) -> None:
    print(f"\n== {label}")
    clean = [per_kb(redact_fn, CLEAN, n) for n in (10_240, 102_400)]
    print(f"clean prose:  {clean[0] * 1e6:8.0f} µs/KB at 10 KB | {clean[1] * 1e6:8.0f} µs/KB at 100 KB")
    for unit in ADVERSARIAL:
        costs = [per_kb(redact_fn, unit, n) for n in adversarial_sizes]
        cells = " | ".join(f"{c * 1e6:8.0f} µs/KB at {n // 1024} KB" for c, n in zip(costs, adversarial_sizes))
        print(f"{unit!r:14}{cells}")
    tuned, held = corpus(), holdout()
    print(
        f"coverage: tuned corpus {sum(caught(redact_fn, s) for s in tuned)}/{len(tuned)}, "
        f"hold-out corpus {sum(caught(redact_fn, s) for s in held)}/{len(held)}"
    )
    if REAL_TEXT.exists():
        rows = [json.loads(line) for line in REAL_TEXT.open()]
        records, links, words = altered(redact_fn, rows)
        sources = sorted({r["source"] for r in rows})
        print(
            f"real text ({len(rows)} records: {', '.join(sources)}): {records} altered, {links} links broken, "
            f"{words} words lost"
        )
    else:
        print(f"real text: {REAL_TEXT} missing (python -m bench.redaction.real_text MIRRORS builds it)")


def per_byte(unit: str, size: int) -> float:
    """CPU seconds per byte of one whole-engine scan of `unit` repeated to `size` characters."""
    text = (unit * (size // len(unit) + 1))[:size]
    started = time.process_time()
    engine.scan(text)
    return (time.process_time() - started) / size


SIZES = (10_000, 1_000_000, 10_000_000)


def cost_per_detector() -> None:
    """Every detector fed its own example repeated (tests/test_redact.py's EXAMPLES: the shortest text only
    it catches), and the URL rule's worst case, through the whole engine at 10 KB, 1 MB and 10 MB: a linear
    detector costs the same per byte at every size."""
    from test_redact import EXAMPLES  # noqa: E402 (tests/ is on the path above)

    print("\ncost per byte, each detector's own example repeated (ns/B at 10 KB | 1 MB | 10 MB; 10 MB / 10 KB)")
    units = [(name, template.replace("{}", secret) + " ") for name, template, secret in EXAMPLES]
    units.append(("password in a URL, worst case", "@a"))  # "ab://u:" + "@a"*k + "@!" was quadratic
    worst = 0.0
    for name, unit in units:
        if name.startswith("password in a URL, worst"):
            unit = "ab://u:" + "@a" * 8
        costs = [per_byte(unit, n) for n in SIZES]
        ratio = costs[2] / costs[0] if costs[0] else float("nan")
        worst = max(worst, ratio)
        cells = " | ".join(f"{c * 1e9:7.0f}" for c in costs)
        print(f"  {name[:44]:44} {cells}   {ratio:5.2f}x")
    print(f"  worst growth from 10 KB to 10 MB: {worst:.2f}x per byte (quadratic would be 1000x)")


def precision() -> None:
    """Ops lines nobody here wrote: the first 40 lines of each of loghub's sixteen 2,000-line samples (public
    logs of HDFS, Hadoop, Spark, OpenSSH, OpenStack, Android, Windows, ...), and the ids vendors document as
    public that issue 33 found altered."""
    from bench.quality.sets.runbooks import MIRRORS, tree

    try:
        t = tree(MIRRORS, "logpai/loghub")
    except SystemExit as exc:
        print(f"\nprecision: {exc}")
        return
    lines = []
    for name in sorted(f for f in t.files(".") if f.endswith("_2k.log")):
        lines += [line for line in t.read(name).splitlines() if line.strip()][:40]
    lines += PUBLIC_IDS
    altered = [line for line in lines if redact(line) != line]
    print(
        f"\nprecision: {len(lines)} ops lines ({len(lines) - len(PUBLIC_IDS)} from loghub's 16 systems, "
        f"{len(PUBLIC_IDS)} public ids), {len(altered)} altered ({len(altered) / len(lines):.1%})"
    )
    for line in altered[:10]:
        print(f"    altered: {line[:110]!r}")
    from .ops_lines import OPS_LINES

    altered = [line for line in OPS_LINES if redact(line) != line]
    print(f"precision: {len(OPS_LINES)} ops lines naming vendors, digests and caches: {len(altered)} altered")
    for line in altered:
        print(f"    altered: {redact(line)[:110]!r}")


# Identifiers vendors document as public, and everyday lines a scheme word stands in (issue 33's finds).
PUBLIC_IDS = [
    "x-amz-id-2: 4n6V2Tf9sG0bYzKq8wXr3lPmA1cD5eH7jN0uQ2vR9tS3yW6zB8xC1dF4gH7jK0mP=",
    "ECDSA key fingerprint is SHA256:n2Vq8LkZ3xW9rT5yP1mQ7bC4dF6gH0jK2sA8eU3iO5w.",
    "payment pi_3MtwBwLkdIwHu7ix28a3tqPa failed with card_declined",
    "charge ch_3MmlLrLkdIwHu7ix0snN0B15 refunded",
    "deployment dpl_89qJQRnBQ8LRWpkhUPwsEKkB8fU2 is READY",
    "nextPageToken: ~!!~AI9FV7TVXmY3kJ2pQzR8wL5nB1cD4eF6gH0jK",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
    "s3://acme-logs/AWSLogs/123456789012/elasticloadbalancing/eu-west-1/2026/11/30/x_aB3dE5gH7jK9mN1pQ2sT4vW6yZ8.log.gz",
    "POST /oauth/token 401 (invalid_client)",
    "upgraded to splunk 9.1.2 last night",
    "a basic 3-node etcd cluster",
    "negotiate 0x80090308 SEC_E_INVALID_TOKEN",
    "Authorization: failed for 42 requests in the last hour on the api gateway",
]


def rows_with_secrets(n: int, share: float) -> list[dict]:
    rng = random.Random(3)
    rows = synthetic_rows(n)
    for row in rng.sample(rows, int(n * share)):
        row["oncall_note"] = f"{row.get('oncall_note', '')} {rng.choice(PASTED)}"
    return rows


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def ingest(rows: list[dict], dim: int) -> None:
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), embedder="fake")
    with Memory.open(settings, embedder=FakeEmbedder(dim)) as memory:
        memory.ingest(Incident.model_validate(r) for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=10_000)
    ap.add_argument("--secret-share", type=float, default=0.02)
    ap.add_argument("--dim", type=int, default=1536)
    ap.add_argument("--before", help="a git revision whose detectors to measure too (e.g. 759fe77)")
    args = ap.parse_args()

    redact_all({"x": PASTED[0]})  # load the catalogue outside the timing
    print(
        f"catalogue: Kingfisher {CATALOGUE.name}, kingfisher-secret-scanner "
        f"{__import__('oncall_memory.redact', fromlist=['catalogue_version']).catalogue_version()}; "
        f"{len(engine.DETECTORS)} detectors"
    )
    if args.before and (before := load_revision(args.before)):
        # The earlier detectors were quadratic on these inputs: 100 KB took seconds to minutes, so 10 and 30 KB.
        report(f"before ({args.before})", before, (10_240, 30_720))
    report("now", redact, (10_240, 102_400))
    cost_per_detector()
    precision()
    from . import catalogues

    print("\nrecall on other catalogues' own examples (python -m bench.redaction.catalogues):")
    catalogues.main([])

    rows = rows_with_secrets(args.incidents, args.secret_share)
    build = lambda: [Incident.model_validate(r) for r in rows]  # noqa: E731
    with mock.patch.object(facts, "holds_secret", lambda data: False):
        build_off, ingest_off = timed(build), timed(lambda: ingest(rows, args.dim))
    build_on, ingest_on = timed(build), timed(lambda: ingest(rows, args.dim))
    n = args.incidents
    print(f"\n{n} incidents ({args.secret_share:.0%} with a pasted credential), fake embedder {args.dim} dims, Edge")
    print(
        f"build the incidents: without redaction {build_off:6.2f} s | with {build_on:6.2f} s | "
        f"{build_on / build_off:.2f}x  ({(build_on - build_off) / n * 1e6:.0f} µs an incident)"
    )
    print(
        f"whole ingest:        without redaction {ingest_off:6.2f} s | with {ingest_on:6.2f} s | "
        f"{ingest_on / ingest_off:.2f}x"
    )


if __name__ == "__main__":
    main()
