"""Log lines are output too: secrets are scrubbed from every record before a handler writes it.

Known secrets (the configured tokens, the Slack webhook URL) are replaced by value; anything else a
detector finds (a token in a path, URL-encoded or not, in an exception message) is redacted. The access log
writes a query's names, not its values (`query_names`). Each argument is read up to twice `MAX_LOG_CHARS`
and written up to `MAX_LOG_CHARS`: the access log runs on the event loop, and a request line is the
client's to choose (a secret across the cut is seen whole before the cut is made). A traceback is redacted whole and kept whole, frames and exception line;
only a line longer than `MAX_LOG_CHARS` (an exception message quoting a body) loses its middle.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote_plus

from .redact import MARKER, cap, redact, secret_spans

# Where records end up: the root logger's handlers and uvicorn's own (its access log does not propagate).
LOGGERS = ("", "uvicorn", "uvicorn.access", "uvicorn.error")
MAX_LOG_CHARS = 4096  # per argument of a log record (a request line, an exception's text)


# The access log repeats its short arguments (the client's address, the method, the path, the protocol) on
# every request: each is scanned once, then read from here (0.3 ms a request otherwise). Bounded both ways.
SEEN_MAX_CHARS = 256
SEEN_MAX = 1024
# A %-format specifier of a log call's template: kept as written, only the text between them is scrubbed.
_SPECIFIER = re.compile(r"%(?:\([^)]*\))?[#0 +\-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[a-zA-Z%]")


class RedactingFilter(logging.Filter):
    def __init__(self, known: list[str] | None = None):
        super().__init__()
        self._known = [s for s in known or [] if s]
        self._seen: dict[str, str] = {}

    def scrub(self, value: Any) -> Any:
        """A string with secrets replaced; any other argument (an httpx URL) as its scrubbed text when that
        text held one, else unchanged (a number must stay a number for `%d`)."""
        if value is None or isinstance(value, (int, float)):
            return value
        text = value if isinstance(value, str) else str(value)
        clean = self._seen.get(text) if len(text) <= SEEN_MAX_CHARS else None
        if clean is None:
            clean = cap(self._redacted(text[: 2 * MAX_LOG_CHARS]), MAX_LOG_CHARS)
            if len(text) <= SEEN_MAX_CHARS:
                if len(self._seen) >= SEEN_MAX:
                    self._seen.clear()  # a stranger's many distinct paths: start again rather than grow
                self._seen[text] = clean
        return value if clean == text else clean

    def _redacted(self, text: str) -> str:
        for secret in self._known:
            text = text.replace(secret, MARKER)
        if "%" in text or "+" in text:
            # A URL in a log line (an outgoing request's, a path) is form-encoded: when it holds a secret, the
            # line is written as it was typed, redacted (its own %-escapes are then read as well).
            decoded = unquote_plus(text)
            if decoded != text and secret_spans(decoded):
                return redact(decoded)
        return redact(text)

    def scrub_traceback(self, text: str) -> str:
        """A formatted traceback redacted whole (every byte read, in linear time), each line kept but the
        middle of one longer than `MAX_LOG_CHARS`."""
        lines = self._redacted(text).split("\n")
        return "\n".join(_middle_cut(line, MAX_LOG_CHARS) for line in lines)

    def scrub_template(self, template: str) -> str:
        """A template with arguments scrubbed around its %-specifiers: a configured secret that happens to
        be a specifier's letters ("s", "d") must not turn "%s" into a broken format."""
        pieces, last = [], 0
        for specifier in _SPECIFIER.finditer(template):
            pieces += [self.scrub(template[last : specifier.start()]), specifier.group()]
            last = specifier.end()
        return "".join([*pieces, self.scrub(template[last:])])

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            # (client, method, path with query, protocol, status): see `query_names`.
            record.args = (*record.args[:2], query_names(str(record.args[2])), *record.args[3:])
        has_args = bool(record.args)
        # With arguments the message is a template; without, it is written as it is (no %-formatting).
        record.msg = (
            self.scrub_template(record.msg) if has_args and isinstance(record.msg, str) else self.scrub(record.msg)
        )
        if isinstance(record.args, tuple):
            # Keep the arguments a tuple: uvicorn's access formatter unpacks them.
            record.args = tuple(self.scrub(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: self.scrub(v) for k, v in record.args.items()}
        if record.exc_info and not record.exc_text:
            record.exc_text = self.scrub_traceback(logging.Formatter().formatException(record.exc_info))
        return True


def query_names(full_path: str) -> str:
    """A request's path with its query's values left out, their names kept (`/similar?text=…&limit=…`). The
    values are the caller's text: an alert's, which the route redacts where it enters, or a token sent in the
    wrong place. Not writing them is safer than finding their secrets, and reading each distinct alert text
    again for secrets cost half a millisecond of every lookup, on the event loop."""
    path, asked, query = full_path.partition("?")
    if not asked:
        return full_path
    return path + "?" + "&".join(part.partition("=")[0] + "=…" for part in query.split("&") if part)


def _middle_cut(line: str, limit: int) -> str:
    """`line` with its middle cut out when longer than `limit`: a traceback's line says where it starts and
    how it ends (the exception's type is at the start of the last line, its cause often at the end)."""
    if len(line) <= limit:
        return line
    half = limit // 2
    return f"{line[:half]}… [cut: {len(line) - 2 * half} characters] …{line[-half:]}"


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
