"""Log lines are output too: secrets are scrubbed from every record before a handler writes it.

Known secrets (the configured tokens, the Slack webhook URL) are replaced by value; anything else a
detector finds (a token in a query string of the access log, URL-encoded or not, in an exception message)
is redacted. Each argument is cut to `MAX_LOG_CHARS` first: the access log runs on the event loop, and a
request line is the client's to choose.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote_plus

from .redact import MARKER, cap, redact, secret_spans

# Where records end up: the root logger's handlers and uvicorn's own (its access log does not propagate).
LOGGERS = ("", "uvicorn", "uvicorn.access", "uvicorn.error")
MAX_LOG_CHARS = 4096  # per argument of a log record (a request line, an exception's text)


class RedactingFilter(logging.Filter):
    def __init__(self, known: list[str] | None = None):
        super().__init__()
        self._known = [s for s in known or [] if s]

    def scrub(self, value: Any) -> Any:
        """A string with secrets replaced; any other argument (an httpx URL) as its scrubbed text when that
        text held one, else unchanged (a number must stay a number for `%d`)."""
        if value is None or isinstance(value, (int, float)):
            return value
        text = value if isinstance(value, str) else str(value)
        clean = cap(text, MAX_LOG_CHARS)
        for secret in self._known:
            clean = clean.replace(secret, MARKER)
        if "%" in clean or "+" in clean:
            # A query string in an access log line is form-encoded: when it holds a secret, the line is
            # written as it was typed, redacted (its own %-escapes are then read as well).
            decoded = unquote_plus(clean)
            if decoded != clean and secret_spans(decoded):
                return redact(decoded)
        clean = redact(clean)
        return value if clean == text else clean

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.scrub(record.msg)
        if isinstance(record.args, tuple):
            # Keep the arguments a tuple: uvicorn's access formatter unpacks them.
            record.args = tuple(self.scrub(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: self.scrub(v) for k, v in record.args.items()}
        if record.exc_info and not record.exc_text:
            record.exc_text = self.scrub(logging.Formatter().formatException(record.exc_info))
        return True


@contextmanager
def redacted_logs(known: list[str] | None = None) -> Iterator[RedactingFilter]:
    """Scrub every record that reaches a handler of the root or uvicorn loggers, while inside."""
    scrub = RedactingFilter(known)
    handlers = {h for name in LOGGERS for h in logging.getLogger(name).handlers}
    for handler in handlers:
        handler.addFilter(scrub)
    try:
        yield scrub
    finally:
        for handler in handlers:
            handler.removeFilter(scrub)
