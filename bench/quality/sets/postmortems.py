"""A set from a public collection of post-mortems labelled by failure family (issue 32).

    python -m bench.quality.sets.postmortems [--mirrors DIR]

Source: danluu/post-mortems, `README.md` (a checkout or a bare mirror under DIR, default /work/.mirror).
Each entry is a company's name (a link to its write-up) and a summary of what broke, under a heading that
names the failure family: Config Errors, Hardware/Power Failures, Conflicts, Time, Database; most are
Uncategorized.

The rule, fixed before any lookup was run:
  - Every entry is an incident: the company as its service, the summary's first sentence as its title, the
    rest as its root cause.
  - Every entry under a family heading is also an alert (the summary, the company as its service), looked
    up among all the others (leave one out); uncategorized entries are only in the memory.
  - strict: none (no entry names another as the same incident); lenient: the other entries of its family;
    facts: those of its family from the same company (where there are none, the lenient ones).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from bench.mirrors import MIRRORS, tree
from oncall_memory.domain.incident import Incident

from . import SetQuery, write_set

FAMILIES = {
    "Config Errors": "config",
    "Hardware/Power Failures": "hardware",
    "Conflicts": "conflicts",
    "Time": "time",
    "Database": "database",
}
_ENTRY = re.compile(r"^\[(?P<company>[^\]]+)\]\([^)]*\)\.?\s*(?P<summary>.+)$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def entries(readme: str) -> list[tuple[str | None, str, str]]:
    """(family or None, company, summary) of each entry under the families' and Uncategorized headings."""
    out, family, keep = [], None, False
    for line in readme.splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
            family, keep = FAMILIES.get(heading), heading in FAMILIES or heading == "Uncategorized"
            continue
        if keep and (m := _ENTRY.match(line.strip())):
            out.append((family, m["company"].strip(), m["summary"].strip()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    args = ap.parse_args()
    found = entries(tree(args.mirrors, "danluu/post-mortems").read("README.md"))
    incidents, families, companies = [], {}, {}
    for n, (family, company, summary) in enumerate(found, start=1):
        title, *rest = _SENTENCE.split(summary, maxsplit=1)
        incident = Incident(
            id=f"PM-{n:03d}", title=title[:300], root_cause=" ".join(rest)[:600] or None, service=company, source="pm"
        )
        incidents.append(incident)
        families[incident.id], companies[incident.id] = family, company
    queries = []
    for incident, (family, company, summary) in zip(incidents, found):
        if family is None:
            continue
        same = sorted(i for i, f in families.items() if f == family and i != incident.id)
        own = [i for i in same if companies[i] == company]
        queries.append(
            SetQuery(
                alert={"text": summary, "service": company},
                strict=[],
                lenient=same,
                facts=own or same,
                own=incident.id,
                key=incident.id,
            )
        )
    write_set("postmortems", incidents, queries, "danluu/post-mortems, families by heading, leave one out")
    print(f"postmortems: {len(incidents)} incidents, {len(queries)} alerts")


if __name__ == "__main__":
    main()
