"""Comparing a secret someone offered with the one we hold: constant-time, and never raising on odd bytes
(headers may carry anything; Starlette decodes them as latin-1). Used by every check of a token or of a
vendor's request signature."""

from __future__ import annotations

import hmac


def same_secret(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("utf-8", "surrogateescape"))
