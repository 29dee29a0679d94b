"""Read an incident backlog from JSONL: a file or a folder of them. A bad line is reported, never fatal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from ..domain.incident import Incident
from ..domain.rejected import Rejected, validation_message
from ..errors import InvalidInput


def backlog_files(path: Path) -> list[Path]:
    """The JSONL files at `path`: the file itself, or the *.jsonl directly in a folder, in name order.

    Not recursive, so a backlog folder can keep other JSONL (labels, exports) in sub-folders.
    """
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl") if p.is_file())
        if not files:
            raise InvalidInput(f"no *.jsonl files under {path}")
        return files
    if not path.exists():
        raise InvalidInput(f"{path} does not exist: give a JSONL file or a folder of them")
    return [path]


# A byte-order mark at a file's start says which encoding wrote it; only UTF-8's (Windows tools write it)
# is read, the others name the fix.
_UTF8_BOM = b"\xef\xbb\xbf"
_OTHER_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}
_SNIFF = 8192  # bytes read to tell a text file from a binary one (as git and grep do: a NUL byte)


def read_jsonl(path: Path | str) -> Iterator[Incident | Rejected]:
    """Every incident in the backlog at `path`, with a `Rejected` in place of each bad line, and of each
    file that is not UTF-8 text (binary, UTF-16): that file is skipped, the others are read."""
    for file in backlog_files(Path(path)):
        with file.open("rb") as fh:
            head = fh.read(_SNIFF)
            if problem := not_text(head):
                yield Rejected(str(file), f"{problem}: skipped (save it as UTF-8 JSONL, one incident per line)")
                continue
            fh.seek(len(_UTF8_BOM) if head.startswith(_UTF8_BOM) else 0)
            for number, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                yield _incident(raw, f"{file}:{number}")


def not_text(head: bytes) -> str | None:
    for bom, encoding in _OTHER_BOMS.items():
        if head.startswith(bom):
            return f"the file is {encoding} (its byte-order mark says so)"
    if b"\0" in head:
        return "the file is binary, or UTF-16/32 without a byte-order mark (it holds NUL bytes)"
    return None


def _incident(raw: bytes, where: str) -> Incident | Rejected:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejected(where, f"not UTF-8 (byte {exc.start + 1} of the line is {raw[exc.start]:#04x})")
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return Rejected(where, f"not valid JSON ({exc.msg} at column {exc.colno})")
    except RecursionError:
        return Rejected(where, "nested too deep to read (an incident is a flat object of fields)")
    if not isinstance(data, dict):
        return Rejected(where, f"expected a JSON object, got {type(data).__name__}")
    try:
        return Incident.model_validate(data)
    except ValidationError as exc:
        return Rejected(where, validation_message(exc))
    except RecursionError:
        return Rejected(where, "nested too deep to read (an incident is a flat object of fields)")
