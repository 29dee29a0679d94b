"""A corpus of real public incident text, for measuring what redaction alters that is not a secret.

    python -m bench.redaction.real_text MIRROR_DIR [--out ~/.cache/oncall-memory/real-text.jsonl]

MIRROR_DIR holds git clones (bare or not) of public repositories, named `owner+name` (the layout the
developers' fetch tool leaves): danluu/post-mortems (the summaries of ~450 public post-mortems, each with
its link), icco/postmortems (242 post-mortems, summary and body), hjacobs/kubernetes-failure-stories (the
list of Kubernetes failure stories) and logpai/loghub (real logs of 16 systems: request, trace and user
ids, hashes, IPs; one record is five consecutive lines, 60 records a system). The text is not committed
to this repository (it is others' writing); this script rebuilds it. One JSON object per line:
{"source": ..., "text": ...}.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

DEFAULT_OUT = Path.home() / ".cache" / "oncall-memory" / "real-text.jsonl"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _repo(mirrors: Path, name: str) -> Path | None:
    for candidate in (mirrors / name / "repo", mirrors / name):
        if candidate.exists():
            return candidate
    return None


def danluu(repo: Path) -> Iterator[str]:
    for paragraph in _git(repo, "show", "HEAD:README.md").split("\n\n"):
        if paragraph.startswith("[") and "](" in paragraph:
            yield paragraph.strip()


def icco(repo: Path) -> Iterator[str]:
    for path in _git(repo, "ls-tree", "-r", "--name-only", "HEAD", "data/").split():
        doc = _git(repo, "show", f"HEAD:{path}")
        front, _, body = doc.partition("\n---\n")
        summary = re.search(r"^summary: (.*)$", front, re.M)
        url = re.search(r"^url: (.*)$", front, re.M)
        yield "\n".join(p for p in (url and url.group(1), summary and summary.group(1), body.strip()) if p)


def failure_stories(repo: Path) -> Iterator[str]:
    for line in _git(repo, "show", "HEAD:README.md").splitlines():
        if line.startswith(("* ", "- ")) and "http" in line:
            yield line[2:].strip()


def loghub(repo: Path, per_system: int = 60, lines: int = 5) -> Iterator[str]:
    rng = random.Random(7)
    for path in sorted(p for p in _git(repo, "ls-tree", "-r", "--name-only", "HEAD").split() if p.endswith("_2k.log")):
        log = _git(repo, "show", f"HEAD:{path}").splitlines()
        starts = sorted(rng.sample(range(0, len(log) - lines, lines), per_system))
        for start in starts:
            yield "\n".join(log[start : start + lines])


SOURCES = {
    "danluu+post-mortems": danluu,
    "icco+postmortems": icco,
    "hjacobs+kubernetes-failure-stories": failure_stories,
    "logpai+loghub": loghub,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mirrors", type=Path)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    counts = {}
    with args.out.open("w", encoding="utf-8") as out:
        for name, read in SOURCES.items():
            repo = _repo(args.mirrors, name)
            if repo is None:
                print(f"missing {name}: skipped")
                continue
            n = 0
            for text in read(repo):
                out.write(json.dumps({"source": name.replace("+", "/"), "text": text}) + "\n")
                n += 1
            counts[name] = n
    print(f"{sum(counts.values())} records -> {args.out}: {counts}")


if __name__ == "__main__":
    main()
