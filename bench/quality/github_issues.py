"""Real text the memory was not tuned on: public GitHub issues, scored against BM25 (issue 20, items 3 and 6).

    python -m bench.quality.github_issues [--texts FILE] [--fetch]

The set: 129 issues from 78 public repositories (Kubernetes, etcd, CoreDNS, Docker, EKS, k3s, Helm,
Longhorn, Envoy, ...) that report one of fifteen operational problems (PLEG not healthy, expired
certificates, DNS from busybox, DNS upstream timeouts, exit code 137, etcd over its quota, Docker Hub's pull
rate limit, too many open files (ulimits and inotify alike: the same error), probes refused, volumes
attached elsewhere, Helm releases stuck mid-operation; added later: pods unschedulable for want of CPU,
memory or pod slots, a node's disk full, CoreDNS exiting on a forwarding loop, an image tag whose manifest
is unknown), and one that reports none of them. `github_issues_labels.jsonl` beside this file holds
each issue's address, its problem (`family`), and the issues its own thread names as the same problem
(`links`): a maintainer's "Duplicate of #10299", a reporter's "related to this OLD issue". Only those
facts are committed; the text is the reporters' and is read from `--texts` (JSONL of {"url", "title",
"body"}) or, with `--fetch`, from GitHub's REST API (title and the body's first 600 characters).

Each issue is an incident (its title, its body as the error signature); each in turn is the alert (title
and body), looked up in the others (leave one out: the lookup asks for one more and drops itself).
Scored two ways, as issue 20 asks:
  - strict: the issues its thread names come first (only the 9 issues that name one in the set);
  - lenient: any other report of the same problem comes first (every issue with another in its family).
Configurations: BM25 (Okapi, k1 1.2, b 0.75, on the same words the memory's word search reads), the
memory's dense-only, word-only, hybrid and hybrid+ranking, with the configured embedder (the local model
by default); then hybrid+ranking with one part taken away, each in a store of its own: every shared word
counted the same (no word rarity), no ops vocabulary (no symptom terms, no symptom boost), and the same-title
evidence read from the whole alert only, not from its headline (no headline title). The alerts
carry no facts (no env, service or labels): ranking has only the text. Last, the confidence the default
lookup gave its first answers, right (another report of the same problem) and wrong.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import httpx

from oncall_memory import Alert, Memory, Settings
from oncall_memory.answer import retrieve, wording
from oncall_memory.answer.bm25 import BM25
from oncall_memory.domain import payload
from oncall_memory.domain.distill import distill_alert
from oncall_memory.domain.incident import Incident
from oncall_memory.evaluation import BASELINE, CONFIGURATIONS, DEPTH, Scores, metrics
from oncall_memory.settings import RankingWeights

LABELS = Path(__file__).with_name("github_issues_labels.jsonl")
DEFAULT_TEXTS = Path.home() / ".cache" / "oncall-memory" / "github-issues.jsonl"
BODY_CHARS = 600


def no_terms() -> list[Any]:
    """The ops vocabulary's terms taken out of the word search, on both sides (the stored entry and the alert)."""
    return [mock.patch.object(retrieve, "terms", lambda keys: []), mock.patch.object(payload, "terms", lambda keys: [])]


# The default lookup with one part taken away: (its weights, what is patched out).
ABLATIONS: dict[str, tuple[dict[str, Any], Callable[[], list[Any]]]] = {
    "  no word rarity": ({"word_rarity": False}, list),
    "  no vocabulary": ({"same_symptom": 0.0}, no_terms),
    "  no headline title": ({}, lambda: [mock.patch.object(wording, "headline", lambda text: text)]),
}


def issue_parts(url: str) -> tuple[str, str, str]:
    """(owner, repo, number) of https://github.com/owner/repo/issues/number."""
    owner, repo, _, number = url.removeprefix("https://github.com/").split("/")
    return owner, repo, number


def issue_id(url: str) -> str:
    """owner/repo#123 for https://github.com/owner/repo/issues/123."""
    owner, repo, number = issue_parts(url)
    return f"{owner}/{repo}#{number}"


def read_labels(path: Path = LABELS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def fetch_texts(urls: Sequence[str], *, api: str = "https://api.github.com", token: str | None = None) -> list[dict]:
    """Each issue's title and the start of its body, from GitHub's REST API (GET /repos/{owner}/{repo}/
    issues/{number}). Unauthenticated, GitHub allows 60 requests an hour: set GITHUB_TOKEN for more."""
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    out = []
    with httpx.Client(base_url=api, headers=headers, timeout=30) as client:
        for url in urls:
            owner, repo, number = issue_parts(url)
            response = client.get(f"/repos/{owner}/{repo}/issues/{number}")
            response.raise_for_status()
            issue = response.json()
            out.append({"url": url, "title": issue["title"], "body": (issue.get("body") or "")[:BODY_CHARS]})
    return out


def joined(labels: list[dict], texts: list[dict]) -> list[dict]:
    by_url = {t["url"]: t for t in texts}
    if missing := [label["url"] for label in labels if label["url"] not in by_url]:
        raise SystemExit(f"no text for {len(missing)} labelled issues (first: {missing[0]}); run with --fetch")
    return [{**label, "title": by_url[label["url"]]["title"], "body": by_url[label["url"]]["body"]} for label in labels]


def relevant_sets(issues: list[dict]) -> tuple[list[list[str]], list[list[str]]]:
    """Per issue: the issues its thread names (strict) and every other issue of its family (lenient)."""
    ids = {i["url"]: issue_id(i["url"]) for i in issues}
    strict = [[ids[u] for u in i["links"] if u in ids] for i in issues]
    lenient = [
        sorted({ids[o["url"]] for o in issues if o["family"] == i["family"] and o is not i} | set(s))
        for i, s in zip(issues, strict)
    ]
    return strict, lenient


def others(memory: Memory, text: str, key: str, **how) -> list:
    """The issue's text looked up among the others: one more asked for, itself dropped."""
    lookup = memory.similar(Alert(text=text), limit=DEPTH + 1, **how)
    return [n for n in lookup.neighbours if n.id != key][:DEPTH]


def run(
    issues: list[dict], settings: Settings, strict: list[list[str]], lenient: list[list[str]]
) -> tuple[dict[str, tuple[Scores, Scores]], list[tuple[bool, str]]]:
    """Every configuration's (strict, lenient) scores over the issues (`relevant_sets`), each looked up among
    the others; and, for the default lookup, whether each first answer is another report of the same problem
    and the confidence it was given."""
    incidents = [
        Incident(id=issue_id(i["url"]), title=i["title"], error_signature=i["body"] or None, url=i["url"])
        for i in issues
    ]
    alerts = [f"{i['title']}\n{i['body']}" for i in issues]
    keys = [issue_id(i["url"]) for i in issues]
    ranked: dict[str, list[list[str]]] = {}
    read = {key: distill_alert(text) for key, text in zip(keys, alerts)}  # each issue as the alert reads it
    bm25 = BM25(read)
    ranked[BASELINE] = [bm25.ranked(read[key], limit=DEPTH, without=[key]) for key in keys]
    firsts = []
    with Memory.open(settings) as memory:
        memory.ingest(incidents)
        for config in CONFIGURATIONS:
            ranked[config.name] = []
            for text, key, same in zip(alerts, keys, lenient):
                found = others(memory, text, key, mode=config.mode, rank=config.rank)
                ranked[config.name].append([n.id for n in found])
                if config.rank and found:
                    firsts.append((found[0].id in same, found[0].confidence))
    for name, (weights, patches) in ABLATIONS.items():
        with contextlib.ExitStack() as stack:
            for patch in patches():
                stack.enter_context(patch)
            ablated = settings.replace(
                data_dir=Path(tempfile.mkdtemp(prefix="github-issues-")), weights=RankingWeights(**weights)
            )
            with Memory.open(ablated) as memory:
                memory.ingest(incidents)
                ranked[name] = [[n.id for n in others(memory, text, key)] for text, key in zip(alerts, keys)]
    scores = {name: (metrics(lists, strict), metrics(lists, lenient)) for name, lists in ranked.items()}
    return scores, firsts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=Path, default=DEFAULT_TEXTS, help="JSONL of {url, title, body}")
    ap.add_argument("--fetch", action="store_true", help="read the texts from GitHub's API into --texts first")
    args = ap.parse_args()
    labels = read_labels()
    if args.fetch:
        try:
            texts = fetch_texts([label["url"] for label in labels], token=os.environ.get("GITHUB_TOKEN"))
        except httpx.HTTPError as exc:  # GitHub down, rate-limited (403/429), or an issue gone (404)
            raise SystemExit(f"reading the issues from GitHub failed: {exc}; set GITHUB_TOKEN or try later") from exc
        args.texts.parent.mkdir(parents=True, exist_ok=True)
        args.texts.write_text("".join(json.dumps(t) + "\n" for t in texts), encoding="utf-8")
    if not args.texts.exists():
        raise SystemExit(f"no issue texts at {args.texts}: run with --fetch (GitHub's API) or pass --texts FILE")
    issues = joined(labels, [json.loads(line) for line in args.texts.read_text(encoding="utf-8").splitlines()])
    strict, lenient = relevant_sets(issues)
    data = Path(tempfile.mkdtemp(prefix="github-issues-"))
    settings = Settings(data_dir=data)
    print(
        f"{len(issues)} issues, {len({i['family'] for i in issues})} problems; embedder {settings.embedder}; "
        f"strict: {sum(1 for s in strict if s)} queries, lenient: {sum(1 for s in lenient if s)} queries"
    )
    results, firsts = run(issues, settings, strict, lenient)
    print(
        f"{'':19} {'strict: MRR':>12} {'hit@1':>6} {'recall@5':>9}   {'lenient: MRR':>13} {'hit@1':>6} {'recall@5':>9}"
    )
    for name, (s, n) in results.items():
        print(
            f"{name:19} {s.mrr:12.3f} {s.hit_at_1:6.3f} {s.recall_at_5:9.3f}   "
            f"{n.mrr:13.3f} {n.hit_at_1:6.3f} {n.recall_at_5:9.3f}"
        )
    for right, words in ((True, "right"), (False, "wrong")):
        levels = Counter(level for ok, level in firsts if ok == right)
        print(
            f"hybrid+ranking, {words} first answers ({sum(levels.values())}): "
            + ", ".join(f"{levels[level]} {level}" for level in ("high", "medium", "low"))
        )


if __name__ == "__main__":
    main()
