"""Secrets never leave the building: redact them before anything is embedded or stored."""

from __future__ import annotations

import re

MARKER = "[REDACTED]"

# Order matters: whole blocks first, then shapes that contain other shapes (URLs before key=value).
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # PEM private keys, whole block (also a truncated block with no END line).
    (re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S), MARKER),
    # Passwords in URLs: scheme://user:password@host keeps the user, drops the password.
    (re.compile(r"(?P<keep>\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+(?=@)", re.I), r"\g<keep>" + MARKER),
    # Authorization headers and bearer tokens.
    (re.compile(r"(?P<keep>\b(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{12,}", re.I), r"\g<keep>" + MARKER),
    # JSON Web Tokens.
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MARKER),
    # AWS access key ids.
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"), MARKER),
    # Well-known vendor token shapes: GitHub, Slack, OpenAI/Anthropic-style, Stripe, Google, PagerDuty u+.
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), MARKER),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}\b"), MARKER),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), MARKER),
    (re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"), MARKER),
    (re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}\b"), MARKER),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), MARKER),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b"), MARKER),
    # key=value / key: value where the key names a secret (aws_secret_access_key, api_key, password, ...).
    (
        re.compile(
            r"(?P<keep>\b[\w.-]*(?:secret|passw(?:or)?d|pwd|api[_-]?key|apikey|access[_-]?key|auth[_-]?token"
            r"|access[_-]?token|refresh[_-]?token|private[_-]?key|client[_-]?secret|token)[\w.-]*\"?'?\s*[:=]\s*[\"']?)"
            r"(?!\[REDACTED\])[^\s\"',;}]{4,}",
            re.I,
        ),
        r"\g<keep>" + MARKER,
    ),
]


# Every secret shape above contains one of these (lower-cased) words or prefixes. Almost no text holds
# any, and substring tests are far cheaper than every substitution (ingest redacts every field).
_TRIGGERS = (
    "secret", "passw", "pwd", "api_key", "api-key", "apikey", "access_key", "access-key", "token", "private",
    "bearer", "basic", "eyj", "akia", "asia", "agpa", "aida", "aroa", "anpa", "ghp_", "gho_", "ghu_",
    "ghs_", "ghr_", "github_pat_", "xox", "sk-", "sk_",
    "rk_", "aiza", "glpat-",
)


_URL_CREDENTIALS = re.compile(r"://[^\s:/@]+:[^\s@/]+@")


def might_hold_secret(text: str) -> bool:
    """False when `text` certainly holds no secret shape we know (a cheap pre-check)."""
    low = text.lower()
    return any(trigger in low for trigger in _TRIGGERS) or ("@" in text and _URL_CREDENTIALS.search(text) is not None)


def redact(text: str) -> str:
    """Return `text` with every recognised secret replaced by `[REDACTED]`."""
    if not might_hold_secret(text):
        return text
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
