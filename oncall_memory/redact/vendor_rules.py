"""The catalogue's keyword-gated rules (a vendor's name, then its token's shape), as `nearby` reads them,
shipped for the catalogue version the project pins.

Reading them from the installed catalogue asks Kingfisher for each of its 488 rules in full (0.04-0.06 s),
after the catalogue itself has loaded (0.4 s): a command on its own (`oncall-memory similar`) waited for
both before it could redact the alert. What they are follows from the catalogue's version and from how
`nearby` reads a rule, so the list is kept here for that version and that reading, and read afresh from the
catalogue for any other (an upgrade is never read through an old list). `tests/test_redact.py` holds the
shipped list equal to what the installed catalogue gives.

    # after the pin moves: write the list for the installed version
    python -m bench.redaction.vendor_rules
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

SHIPPED = Path(__file__).with_name("vendor_rules.json")

Rules = list[tuple[str, str]]  # (keyword alternation, token shape)


def reading(*parts: object) -> str:
    """A short digest of how a rule is read (the pattern that takes it apart, the words left out)."""
    return hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:16]


def shipped(version: str, read_by: str) -> Rules | None:
    """The shipped rules when they were read from `version` the way `read_by` says, else None."""
    try:
        data = json.loads(SHIPPED.read_text())
        if data.get("catalogue") != version or data.get("read_by") != read_by:
            return None
        return [(str(keywords), str(shape)) for keywords, shape in data["rules"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # missing or damaged: read afresh
        return None
