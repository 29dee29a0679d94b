"""Secrets never leave the building: found in any text where it enters and replaced by `[REDACTED]`.

Four layers of detectors, each linear in its input (see `base.py`), over a text cut to `MAX_FIELD_CHARS`:

- **vendors** (`vendors.py`): tokens by the prefixes their vendors fix (`ghp_`, `NRAK-`, `dapi`, `AKIA`, ...);
- **context** (`context.py`): the value after a key, flag or header that announces it, in the syntaxes of
  everyday tools (`password:`, `--client-secret`, `curl -u`, `.netrc`, `.pgpass`, `Authorization:`, signed
  URL parameters, `user:password@host`, base64-wrapped credentials, Kubernetes Secret data, PEM blocks);
- **high entropy** (`entropy.py`): a long mixed-case token as random as base64;
- **the catalogue** (`catalogue.py`): Kingfisher's bundled Betterleaks and Veles rules, on Vectorscan.

Each runs again over the text unfolded (`unfold.py`: zero-width characters, wrapped lines and %-escapes
removed), so a token split or encoded is found too. What goes out to chat and pagers is also neutralised
(`outbound.py`: no bidi overrides or invisible characters).
"""

from .base import Detector, Span
from .catalogue import catalogue_version
from .engine import DETECTORS, MARKER, MAX_FIELD_CHARS, cap, redact, secret_spans
from .outbound import neutralise
from .records import already_redacted, holds_secret, is_already_redacted, redact_all, redact_each

__all__ = [
    "DETECTORS",
    "MARKER",
    "MAX_FIELD_CHARS",
    "Detector",
    "Span",
    "already_redacted",
    "cap",
    "catalogue_version",
    "holds_secret",
    "is_already_redacted",
    "neutralise",
    "redact",
    "redact_all",
    "redact_each",
    "secret_spans",
]
