"""Read an incident backlog from JSONL: a file or a folder of them. A bad line is reported, never fatal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from .errors import InvalidInput
from .incident import Incident


@dataclass(frozen=True)
class Rejected:
    """A line that could not become an incident, and why, in words that say what to fix."""

    where: str  # "path:line"
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def validation_message(exc: ValidationError) -> str:
    """A pydantic error in words that say which field to fix and how."""
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if not field:  # a check of the whole record: its message names the field
            parts.append(msg)
            continue
        if err["type"] == "missing":
            msg = "is required"
        elif err["type"] == "extra_forbidden":
            msg = "is not a known field (see the README for the incident format)"
        parts.append(f"{field} {msg}" if err["type"] in ("missing", "extra_forbidden") else f"{field}: {msg}")
    return "; ".join(parts)


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


def read_jsonl(path: Path | str) -> Iterator[Incident | Rejected]:
    """Every incident in the backlog at `path`, with a `Rejected` in place of each bad line."""
    for file in backlog_files(Path(path)):
        with file.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                where = f"{file}:{number}"
                try:
                    data = json.loads(line)
                except json.JSONDecodeError as exc:
                    yield Rejected(where, f"not valid JSON ({exc.msg} at column {exc.colno})")
                    continue
                if not isinstance(data, dict):
                    yield Rejected(where, f"expected a JSON object, got {type(data).__name__}")
                    continue
                try:
                    yield Incident.model_validate(data)
                except ValidationError as exc:
                    yield Rejected(where, validation_message(exc))
