"""Text that says something: at least one character that is not white space, by one rule that Python, the
validator (Rust's regex) and the OpenAPI schema's readers (JavaScript's regex, which schemathesis uses) all
read alike. `\\S` is not that rule: JavaScript's `\\s` leaves out U+0085 (NEL) and U+001C-U+001F, which Python
strips, so a message of "\\u0085" fitted the schema and was refused."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

# Every character `str.isspace()` holds, spelt as each engine reads it (\\xHH and \\uHHHH are common to all three).
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
NOT_BLANK = f"[^{_SPACE}]"

NonBlank = Annotated[str, StringConstraints(min_length=1, pattern=NOT_BLANK)]
