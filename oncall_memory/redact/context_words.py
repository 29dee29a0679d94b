"""The words that announce a secret beside its value (`password:`, `api_key=`), shared by the detectors that
read context (`context`, `encoded`)."""

from __future__ import annotations

# Key names that announce a password (their value may be several words after "key: ") and those that
# announce a token or key (one token).
PASSWORD_WORDS = r"passw(?:or)?d|passphrase|passwd|pwd|(?:\b|_)pass(?:\b|_)|(?:\b|_)pw\b"
KEY_WORDS = (
    r"secret|token|credentials?|apikey|api[_-]key|auth[_-]?key|access[_-]?key|private[_-]?key|"
    r"client[_-]?secret|signing[_-]?key|encryption[_-]?key|master[_-]?key|license[_-]?key|"
    r"account[_-]?key|app[_-]?key|(?:\b|_)auth\b|sas[_-]?token|storepass|keypass"
)
PASSWORD_KEYWORDS = ("pass", "pwd", "pw")
KEY_KEYWORDS = ("secret", "token", "credential", "key", "auth", "storepass", "keypass")
# How a key is given its value: `key: v`, `key = v`, `"key": "v"`, `key := v`, `key => v`.
ASSIGN = r"[\"']?[ \t]*(?::=|=>|=|:)[ \t]*"
