"""Positive and negative examples other secret catalogues ship with their rules: test cases nobody here
wrote, to measure recall and precision on (issue 33).

    python -m bench.redaction.catalogues [--mirrors DIR]

Read from checkouts or bare mirrors under DIR (default /work/.mirror, as this workplace's `fetch` leaves
them; `git clone` elsewhere), never committed:
  - mongodb/kingfisher `data/rules/*.yml` (also under `crates/kingfisher-rules/`): each rule's `examples`;
  - gitleaks/gitleaks `cmd/generate/config/rules/*.go`: the string literals of each rule's `tps` (a full
    example line, or the secret `GenerateSampleSecrets` would wrap, standing alone) and `fps`;
  - Yelp/detect-secrets `test_data/`: `each_secret.py` and `files/file_with_secrets.py`, a secret per
    assignment, and `files/file_with_no_secrets.py` line by line as negatives.
TruffleHog's detector tests are not read: their examples are Go test tables built in code, per detector.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.mirrors import MIRRORS, Tree, tree
from oncall_memory.redact import redact


@dataclass
class Catalogue:
    name: str
    positives: list[str] = field(default_factory=list)
    negatives: list[str] = field(default_factory=list)


def kingfisher_rules(t: Tree) -> Iterator[dict[str, Any]]:
    """Every rule of Kingfisher's catalogue, as its YAML files under `rules/` give them."""
    for path in t.files("."):
        if not (path.endswith(".yml") and "/rules/" in f"/{path}"):
            continue
        try:
            doc = yaml.safe_load(t.read(path)) or {}
        except yaml.YAMLError:
            continue
        yield from doc.get("rules", []) if isinstance(doc, dict) else []


def kingfisher(t: Tree) -> Catalogue:
    out = Catalogue("Kingfisher rules' examples")
    for rule in kingfisher_rules(t):
        out.positives += [e for e in rule.get("examples") or [] if isinstance(e, str)]
        out.negatives += [e for e in rule.get("negative_examples") or [] if isinstance(e, str)]
    return out


_GO_STRING = re.compile(r'`([^`]*)`|"((?:[^"\\\n]|\\.)*)"')
_SAMPLE = re.compile(r'GenerateSampleSecrets\(\s*"[^"]*"\s*,\s*(?:`([^`]*)`|"((?:[^"\\\n]|\\.)*)")\s*\)')


def _block(source: str, name: str) -> list[str]:
    """The bodies of `name := []string{...}` and `name = append(name, ...)` in a Go file."""
    bodies = []
    for m in re.finditer(rf"\b{name}\s*:?=\s*(?:\[\]string\{{|append\({name},)", source):
        depth, i = 1, m.end()
        while i < len(source) and depth:
            depth += {"{": 1, "(": 1, "}": -1, ")": -1}.get(source[i], 0)
            i += 1
        bodies.append(source[m.end() : i - 1])
    return bodies


# A list element: a string literal alone on its line (or first on it), then a comma.
_ELEMENT = re.compile(r'^[ \t]*(?:`([^`]*)`|"((?:[^"\\\n]|\\.)*)")[ \t]*,', re.M)


def _literals(body: str) -> list[str]:
    """The string literals that are elements of the list itself, not arguments of a call inside it."""
    out = []
    for m in _ELEMENT.finditer(body):
        text = m.group(1) if m.group(1) is not None else m.group(2).encode().decode("unicode_escape", "replace")
        if len(text) >= 8:
            out.append(text)
    return out


def gitleaks(t: Tree) -> Catalogue:
    out = Catalogue("gitleaks rules' tps / fps (literal ones)")
    for path in t.files("cmd/generate/config/rules"):
        if not path.endswith(".go") or path.endswith("_test.go"):
            continue
        source = t.read(path)
        for body in _block(source, "tps"):
            out.positives += _literals(body)
        for m in _SAMPLE.finditer(source):
            secret = m.group(1) if m.group(1) is not None else m.group(2)
            if secret and "+" not in secret and len(secret) >= 8:
                out.positives.append(secret)
        negatives = [n for body in _block(source, "fps") for n in _literals(body)]
        out.negatives += negatives
        # A `tps = append(tps, ...)` block holding a parenthesis in a string runs on into the file's fps: what
        # the file lists as a false positive is no positive.
        out.positives = [p for p in out.positives if p not in set(negatives)]
    return out


_ASSIGNED = re.compile(r"^\s*\w+\s*=\s*['\"]([^'\"]{8,})['\"]", re.M)


def detect_secrets(t: Tree) -> Catalogue:
    out = Catalogue("detect-secrets test data")
    for path in ("test_data/each_secret.py", "test_data/files/file_with_secrets.py"):
        for line in t.read(path).splitlines():
            if _ASSIGNED.match(line) and "pragma: allowlist" not in line and "red_herring" not in line:
                out.positives.append(line)
    for line in t.read("test_data/files/file_with_no_secrets.py").splitlines():
        if line.strip():
            out.negatives.append(line)
    return out


def caught(text: str) -> bool:
    """Did redaction change the example? (A positive is caught when anything in it was replaced.)"""
    return redact(text) != text


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--misses", type=int, default=0, help="print this many missed positives per catalogue")
    args = ap.parse_args(argv)
    for build, repo in (
        (kingfisher, "mongodb/kingfisher"),
        (gitleaks, "gitleaks/gitleaks"),
        (detect_secrets, "Yelp/detect-secrets"),
    ):
        try:
            catalogue = build(tree(args.mirrors, repo))
        except SystemExit as exc:
            print(f"{repo}: {exc}")
            continue
        hits = [p for p in catalogue.positives if caught(p)]
        false = [n for n in catalogue.negatives if caught(n)]
        line = f"{catalogue.name}: recall {len(hits)}/{len(catalogue.positives)}"
        if catalogue.positives:
            line += f" ({len(hits) / len(catalogue.positives):.0%})"
        if catalogue.negatives:
            line += f"; negatives altered {len(false)}/{len(catalogue.negatives)}"
        print(line)
        for missed in [p for p in catalogue.positives if p not in hits][: args.misses]:
            print(f"    missed: {missed[:120]!r}")


if __name__ == "__main__":
    main()
