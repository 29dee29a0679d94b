"""Writes `oncall_memory/redact/vendor_rules.json`, the catalogue's keyword-gated rules as `redact.nearby`
reads them, for the installed kingfisher-secret-scanner (run after its pin moves; the product reads the file,
or the catalogue itself when the versions differ: `redact/vendor_rules.py`).

    python -m bench.redaction.vendor_rules
"""

from __future__ import annotations

import json

from oncall_memory.redact.vendor_rules import SHIPPED, Rules


def write(version: str, read_by: str, rules: Rules) -> None:
    lines = ",\n".join("  " + json.dumps(list(rule), ensure_ascii=False) for rule in rules)
    head = json.dumps({"catalogue": version, "read_by": read_by})[:-1]
    SHIPPED.write_text(f'{head}, "rules": [\n{lines}\n]}}\n')


def main() -> None:
    from oncall_memory.redact.catalogue import catalogue_version
    from oncall_memory.redact.nearby import READ_BY, derived_rules

    rules = derived_rules()
    write(catalogue_version(), READ_BY, rules)
    print(f"{len(rules)} keyword-gated rules of kingfisher-secret-scanner {catalogue_version()} -> {SHIPPED}")


if __name__ == "__main__":
    main()
