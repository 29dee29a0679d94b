"""The backlog on disk: JSONL files (one incident a line) and post-mortems in Markdown (one a document).

A folder is read as teams keep one: its *.jsonl (not in sub-folders, which may hold other JSONL such as
labels or exports) and its *.md at any depth (post-mortems are filed by year, team or service).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..domain.incident import Incident
from ..domain.rejected import Rejected
from ..errors import InvalidInput
from .git_links import repository
from .jsonl_files import read_jsonl
from .postmortem import documents, read_postmortem


def read_backlog(path: Path | str) -> Iterator[Incident | Rejected]:
    """Every incident at `path` (a JSONL file, a Markdown post-mortem, or a folder of both), with a
    `Rejected` in place of each line or document that could not be read."""
    path = Path(path)
    if path.is_dir():
        markdown = list(documents(path))
        try:
            yield from read_jsonl(path)  # the folder's *.jsonl, as a JSONL backlog is read
        except InvalidInput:  # none: a folder of post-mortems alone is a backlog too
            if not markdown:
                raise InvalidInput(f"no *.jsonl or *.md files under {path}") from None
        yield from _postmortems(path, markdown)
    elif path.suffix.lower() in (".md", ".markdown") and path.is_file():
        yield from _postmortems(path.parent, [path])
    else:
        yield from read_jsonl(path)


def _postmortems(folder: Path, paths: list[Path]) -> Iterator[Incident | Rejected]:
    if not paths:
        return
    repo = repository(folder)
    for path in paths:
        if repo is not None:
            doc_id, url = repo.relative(path), repo.link(path)
        else:
            doc_id, url = path.resolve().relative_to(folder.resolve()).as_posix(), None
        yield read_postmortem(path, doc_id, url)
