"""Catalogue recall in six contexts (issue 51): each maintained catalogue's own examples, their secret put
where on-call text puts one, with the vendor's name beside it.

    python -m bench.redaction.contexts [--mirrors DIR] [--misses N]

Catalogues (read from checkouts or bare mirrors under DIR, as `bench.redaction.catalogues` reads them):
  - mongodb/kingfisher `data/rules/*.yml`: each rule's `examples`, its secret the rule's own capture;
  - gitleaks/gitleaks `config/gitleaks.toml` (the rules: regex, secretGroup, keywords, entropy, allowlists)
    and `cmd/generate/config/rules/*.go` (the examples, `tps`): the secret is what the first rule that
    matches an example captures, unless that rule's own entropy floor or allowlists drop it.
Rules that find what names or locates a credential (a client or app id, a host, a URL: kept by design, see
`redact/catalogue.py`) are left out, and so are examples whose secret is under 8 characters.

The vendor's name is the rule's own: Kingfisher's id (`kingfisher.numverify.1` -> numverify), gitleaks'
first keyword. The six contexts: an alert's prose, a log line with `key=`, an env line, a curl header, YAML,
a sentence. A secret is caught when it is no longer in the redacted text.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench.mirrors import MIRRORS, Tree, tree
from oncall_memory.redact import redact
from oncall_memory.redact.entropy import shannon_bits

from .catalogues import gitleaks as gitleaks_examples
from .catalogues import kingfisher_rules

CONTEXTS = {
    "alert prose": "{V} credential in use {S} was rejected by the upstream API",
    "log key=": "ERROR {v}-client request rejected status=403 retries=3 key={S}",
    "env line": "{U}_API_KEY={S}",
    "curl header": "curl -sS -H 'Authorization: Bearer {S}' https://api.{v}.example/v1/status",
    "yaml": "{v}:\n  api_key: {S}",
    "sentence": "The {V} key we rotated after the incident was {S}.",
    # A vendor named, no credential word: what a page or a chat says (issue 81).
    "vendor prose": "paged: {v} webhook retries exhausted; the value we rotated after was {S} (now revoked)",
    "vendor failure": "{V} sync failing since 03:10; auth failed for {S}, rolled back",
}
_IDENTIFIER = re.compile(
    r"client[-_ ]?id|app[-_ ]?id|application[-_ ]?id|account[-_ ]?id|tenant|domain|host|url|hostname|"
    r"endpoint|instance|org[-_ ]?id|project[-_ ]?id|user[-_ ]?name|region|cloud[-_ ]?name|public|pub[-_ ]?key",
    re.I,
)


@dataclass(frozen=True)
class Example:
    catalogue: str
    rule: str
    vendor: str
    secret: str


def _python_regex(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def kingfisher(t: Tree) -> list[Example]:
    out = []
    for rule in kingfisher_rules(t):
        rid, name = str(rule.get("id", "")), str(rule.get("name", ""))
        if _IDENTIFIER.search(rid) or _IDENTIFIER.search(name):
            continue
        compiled = _python_regex(rule.get("pattern", ""))
        vendor = rid.split(".")[1] if rid.count(".") >= 1 else name.split()[0].lower()
        for example in rule.get("examples") or []:
            match = compiled.search(example) if compiled and isinstance(example, str) else None
            if match and match.groups() and match.group(1) and len(match.group(1)) >= 8:
                out.append(Example("kingfisher", rid, vendor, match.group(1)))
    return out


def gitleaks(t: Tree) -> list[Example]:
    config = tomllib.loads(t.read("config/gitleaks.toml"))
    rules = []
    for rule in config.get("rules", []):
        compiled = _python_regex(rule.get("regex", ""))
        if compiled is None or _IDENTIFIER.search(rule.get("id", "")):
            continue
        keywords = rule.get("keywords") or [rule["id"].split("-")[0]]
        # A finding the rule's own filters drop is no positive: its entropy floor, its allowlists' stopwords
        # and regexes on the secret (the generic rule's examples list what it must not report, too).
        stop = [w.lower() for a in rule.get("allowlists", []) for w in a.get("stopwords", [])]
        allowed = [
            r
            for a in rule.get("allowlists", [])
            if a.get("regexTarget", "secret") == "secret" and "paths" not in a
            for r in (_python_regex(x) for x in a.get("regexes", []))
            if r is not None
        ]
        filters = (float(rule.get("entropy", 0.0)), stop, allowed)
        rules.append((rule["id"], compiled, int(rule.get("secretGroup", 0) or 0), keywords[0], filters))
    out = []
    for example in dict.fromkeys(gitleaks_examples(t).positives):
        for rid, compiled, group, keyword, (entropy, stop, allowed) in rules:
            match = compiled.search(example)
            if match is None:
                continue
            number = group or (1 if compiled.groups else 0)
            secret = match.group(number) if number <= compiled.groups else None
            if secret and (
                shannon_bits(secret) < entropy
                or any(w in secret.lower() for w in stop)
                or any(r.search(secret) for r in allowed)
            ):
                secret = None
            if secret and len(secret) >= 8:
                vendor = re.sub(r"[^a-z0-9]+", "", keyword.lower()) or rid.split("-")[0]
                out.append(Example("gitleaks", rid, vendor, secret))
            break
    return out


def contexts(example: Example) -> dict[str, str]:
    v = example.vendor
    return {
        name: template.format(V=v.capitalize(), v=v, U=v.upper(), S=example.secret)
        for name, template in CONTEXTS.items()
    }


_RUNS = ("abcdefgh", "zyxwvuts", "12345678", "98765432", "xxxxxxxx", "xxxxxx", "xxxxx")
_PLACEHOLDER_WORDS = ("example", "your", "placeholder", "sample", "here", "dummy", "fake", "secret_goes")


def kind(secret: str) -> str:
    """What the missed token is, for the report: first what it means (a placeholder, a name or an address,
    a word), then, for the rest, its length and shape."""
    low = secret.lower()
    if any(r in low for r in _RUNS) or any(w in low for w in _PLACEHOLDER_WORDS) or len(set(low)) * 4 <= len(low):
        return "placeholder (a run of the alphabet, a repeated or an 'example' value)"
    if "://" in secret or "\\" in secret or re.search(r"@[\w-]+\.\w", secret) or low.startswith("machine "):
        return "a name or an address (URL, e-mail, host, DOMAIN\\user)"
    if re.fullmatch(r"[A-Za-z_:]+", secret):
        return "a word (a user name, or a password that is one)"
    if len(secret) < 12:
        return "short (under 12 characters)"
    if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", secret, re.I):
        return "uuid"
    if re.fullmatch(r"[0-9a-fA-F]+", secret):
        return "hex"
    if re.fullmatch(r"[a-z0-9]+", secret):
        return "lowercase+digits"
    if re.fullmatch(r"[A-Za-z0-9]+", secret):
        return "mixed case"
    return "with punctuation"


def measure(examples: list[Example], misses: int = 0) -> dict[str, tuple[int, int]]:
    table: dict[str, tuple[int, int]] = {}
    missed_kinds: Counter[str] = Counter()
    shown = 0
    for name in CONTEXTS:
        caught = 0
        for example in examples:
            text = contexts(example)[name]
            if example.secret not in redact(text):
                caught += 1
            else:
                missed_kinds[kind(example.secret)] += 1
                if shown < misses:
                    shown += 1
                    print(f"    missed ({name}, {example.rule}): {text[:140]!r}")
        table[name] = (caught, len(examples))
    table["missed, by kind"] = (sum(missed_kinds.values()), 0)
    print(f"    misses by kind (over the {len(CONTEXTS)} contexts):")
    for k, n in missed_kinds.most_common():
        print(f"      {n:4}  {k}")
    return table


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--misses", type=int, default=0, help="print this many misses per catalogue")
    args = ap.parse_args(argv)
    for name, build, repo in (
        ("Kingfisher", kingfisher, "mongodb/kingfisher"),
        ("gitleaks", gitleaks, "gitleaks/gitleaks"),
    ):
        examples = build(tree(args.mirrors, repo))
        print(f"{name}: {len(examples)} examples of {len({e.rule for e in examples})} rules")
        table = measure(examples, args.misses)
        for context, (caught, total) in table.items():
            if total:
                print(f"  {context:14} {caught}/{total} ({caught / total:.0%})")


if __name__ == "__main__":
    main()
