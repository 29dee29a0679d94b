"""The lab: measurements of the product, apart from it. Folders by question (bench/README.md):
`perf` (how fast, how much memory), `quality` (how right, with the labelled sets it is measured on) and
`redaction` (what secret detection catches and what it alters that is not a secret).

Nothing in the product or its tests imports from here. The other way round, benchmarks reuse the tests'
fixtures (the synthetic backlog, the PagerDuty fake, the secret corpora), so `tests/` is put on the path.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))
