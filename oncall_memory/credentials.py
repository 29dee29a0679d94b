"""Comparing a secret someone offered with the one we hold: constant-time, and never raising on odd bytes
(headers may carry anything; Starlette decodes them as latin-1). Used by every check of a token or of a
vendor's request signature; and where a request's headers offer one (a bearer token, basic auth's password).
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Mapping


def same_secret(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("utf-8", "surrogateescape"))


def bearer(headers: Mapping[str, str]) -> str:
    """The token of an `Authorization: Bearer ...` header, or ""."""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def basic_password(headers: Mapping[str, str]) -> str:
    """The password of an `Authorization: Basic ...` header, or "" (none, or not base64 of UTF-8)."""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return ""
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return ""
    return decoded.partition(":")[2]
