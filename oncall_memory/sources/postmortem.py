"""Post-mortem documents in Markdown as incidents: one document is one incident.

A post-mortem always says what broke and what fixed it, which a pager's incident rarely does. Templates
differ in layout (headings in PagerDuty's and GitLab's, bold labels at the start of a paragraph in
Google's SRE workbook, setext headings or "Label: text" lines in plain ones), so sections are found by
their usual names, whichever way they are marked, and everything else is left out.

Field mapping (document -> Incident):
    id              <- front matter `id` (or `incident`), else the path (in its git repository, else under
                       the folder given): an edit re-ingests in place, a move is a new incident
    title           <- front matter `title`, else the first H1 (else a "Title:" line, else the file name);
                       a "Postmortem:" / "Incident review:" prefix and "(incident #465)" are dropped
    root_cause      <- Root cause(s) / Root Cause Analysis / Contributing factors / Trigger
    error_signature <- Detection / Symptoms / Error, and the first fenced block (log lines); else Impact
    oncall_note     <- Summary / Overview / What happened, then Resolution / Mitigation
    fixes_attempted <- each top-level item of Resolution ("resolved") or Mitigation ("mitigated"); a
                       prose section is one fix. Action items and corrective actions are future work: left out
    service, severity, env, flavor, tags, opened_at (date), resolved_at, status, url
                    <- front matter, else a "Service: ...", "Severity: ...", "Date: ..." line in the text
    url             <- the file's page at its last commit when it lives in a git repository with a
                       remote (see `git_links`), else its path
Timeline, lessons learned, action items and the like are not embedded: they are about the team, not the fault.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..domain.incident import Incident
from ..domain.rejected import Rejected, validation_message
from ..domain.told_fixes import effect, told_fixes
from . import moment
from .jsonl_files import not_text
from .sections import META, Reading, label, read_sections, signal_lines

MAX_BYTES = 1 << 20  # a post-mortem is a few pages; a bigger file is an export or an attachment
SKIPPED_NAMES = re.compile(r"^(readme|changelog|contributing|license|index)\b|template", re.I)

_TITLE_NOISE = re.compile(
    r"^\s*(post[- ]?mortem|incident (post[- ]?mortem|review|report)|rca|retrospective)\s*[:\-–—]\s*"
    r"|\s*[:\-–—]?\s*(post[- ]?mortem|incident review|incident report)\s*$"
    r"|\s*\((incident|inc)?\s*#?\s*\d+\)\s*",
    re.I,
)
# "Post-Mortem for the checkout outage" (PagerDuty's template), "Postmortem of ...", "[Postmortem] ...".
_TITLE_LEAD = re.compile(
    r"^\s*\[?\s*(?:incident\s+)?(?:post[- ]?mortem|retrospective|incident review|rca)(?:\s+report)?\s*\]?"
    r"\s*(?:for|of|on|about)\s+(?:the\s+)?",
    re.I,
)
_FRONT_MATTER_END = re.compile(r"^(---|\.\.\.)\s*$", re.M)


def read_postmortem(path: Path, doc_id: str, url: str | None) -> Incident | Rejected:
    """The incident `path` describes, or a `Rejected` that says what to fix."""
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Rejected(where, f"cannot read it ({exc.strerror or exc})")
    if len(raw) > MAX_BYTES:
        return Rejected(
            where, f"{len(raw):,} bytes, over the {MAX_BYTES:,} a post-mortem may be: split it or leave it out"
        )
    if problem := not_text(raw[:8192]):
        return Rejected(where, f"{problem}: skipped (save it as UTF-8 Markdown)")
    try:
        source = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return Rejected(f"{where}:{line}", f"not UTF-8 (byte {raw[exc.start]:#04x}): save the file as UTF-8")
    front, body, problem = _front_matter(source)
    if problem:
        return Rejected(f"{where}:1", problem)
    reading = read_sections(body)
    if front and not reading.text and reading.prose:
        reading = _from_prose(reading)  # a static site's page: the front matter names it, the body tells it
    fields, problem = _fields(front, reading, doc_id, url, path)
    if problem:
        return Rejected(where, problem)
    if not any(fields.get(k) for k in ("root_cause", "error_signature", "oncall_note")):
        return Rejected(
            where,
            "no post-mortem section found (Summary, Root cause, Trigger, Resolution, ...): name the sections "
            "as a post-mortem template does, or keep the file out of the folder",
        )
    try:
        return Incident.model_validate(fields)
    except ValidationError as exc:
        return Rejected(where, validation_message(exc))


_CAUSE = re.compile(r"\b(?:root cause|caused by|because|due to|was triggered by|the cause)\b", re.I)


def _from_prose(reading: Reading) -> Reading:
    """A body written as prose under front matter (a Jekyll or Hugo post-mortem page): its sentences that
    give a cause are the root cause, the story is the on-call note, and what it says was done, with what
    effect, are the fixes."""
    text = " ".join(reading.prose)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    causes = [s for s in sentences if _CAUSE.search(s)]
    reading.text = {"summary": [text]}
    if causes:
        reading.text["root_cause"] = causes
    reading.fixes = told_fixes(text, "resolution") if effect(text) else []
    return reading


def _front_matter(source: str) -> tuple[dict[str, Any], str, str | None]:
    """YAML front matter between `---` lines at the very top (as Jekyll, Hugo and Docusaurus write it)."""
    if not source.startswith("---") or source[3:4] not in ("\n", "\r"):
        return {}, source, None
    end = _FRONT_MATTER_END.search(source, 4)
    if end is None:
        return {}, source, "front matter opened with --- is never closed: end it with a --- line"
    try:
        data = yaml.safe_load(source[4 : end.start()])
    except yaml.YAMLError as exc:
        return {}, source, f"front matter is not valid YAML ({' '.join(str(exc).split())[:200]})"
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return {}, source, "front matter must be key: value lines (a YAML mapping)"
    return data, source[end.end() :], None


def _fields(
    front: dict[str, Any], reading: Reading, doc_id: str, url: str | None, path: Path
) -> tuple[dict[str, Any], str | None]:
    """The incident's fields; a front-matter value that cannot be used is an error that names it."""
    meta: dict[str, Any] = dict(reading.meta)
    for raw_key, value in front.items():
        key = META.get(label(raw_key)) if isinstance(raw_key, str) else None
        if key is None or value in (None, "", []):
            continue
        if not _plain_value(value):
            # YAML aliases can nest a structure whose text is billions of items long: never turned into text.
            return {}, f"front matter {raw_key}: give a plain value (text, a number, a date, or a list of them)"
        meta[key] = value  # front matter says it on purpose: it wins over running text
    for key in ("opened_at", "resolved_at"):
        if key in meta:
            when = _moment(meta[key])
            if when is None:
                if reading.meta.get(key) is meta[key]:
                    del meta[key]  # "Date: the week of the launch" in prose: not a date, not an error
                    continue
                return (
                    {},
                    f"front matter {key.replace('_at', '')}: {str(meta[key])[:60]!r} is not a date (use 2025-03-14)",
                )
            meta[key] = when
    tags = meta.pop("component_tags", None)
    if isinstance(tags, str):
        tags = [t for t in re.split(r"[,\s]+", tags) if t]
    service = meta.get("service")
    if isinstance(service, list):  # "services: [checkout, payments]": the first is the service
        names = [str(s) for s in service]
        meta["service"] = names[0] if names else None
        tags = list(tags or []) + names[1:]
    title = meta.pop("title", None) or reading.title or _stem_title(path)
    fields: dict[str, Any] = {
        "id": str(meta.pop("id", None) or doc_id),
        "source": "postmortem",
        "title": _clean_title(str(title)),
        "status": str(meta.pop("status", None) or "resolved"),
        "url": str(meta.pop("url", None) or url or path.resolve()),
        **signal_lines(reading),
    }
    if tags:
        fields["component_tags"] = [str(t) for t in tags]
    for key in ("service", "severity", "env", "flavor", "opened_at", "resolved_at"):
        if meta.get(key) not in (None, ""):
            fields[key] = meta[key] if key.endswith("_at") else str(meta[key])
    return fields, None


_SCALARS = (str, int, float, dt.date)


def _plain_value(value: Any) -> bool:
    """A scalar, or a short list of scalars: what a front-matter field of a post-mortem holds."""
    if isinstance(value, list):
        return len(value) <= 50 and all(isinstance(v, _SCALARS) for v in value)
    return isinstance(value, _SCALARS)


def _moment(value: Any) -> dt.datetime | None:
    """A date as front matter or a "Date:" line gives it (YAML already turns 2025-03-14 into a date)."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return moment(str(value))


def _clean_title(title: str) -> str:
    # One space between words first: the patterns' optional runs of spaces around optional words went back
    # over a long run at each step (a heading of spaces took time quadratic in it).
    title = _TITLE_LEAD.sub("", " ".join(title.split()))
    cleaned = " ".join(_TITLE_NOISE.sub(" ", _TITLE_NOISE.sub(" ", title)).split())  # "X Postmortem (incident #3)"
    return cleaned or " ".join(title.split())


def _stem_title(path: Path) -> str:
    """`2024-03-05-db-failover.md` -> "db failover"."""
    words = re.sub(r"^\d{4}-\d{2}-\d{2}[-_ ]*", "", path.stem).replace("-", " ").replace("_", " ")
    return words.strip() or path.stem


def documents(folder: Path) -> Iterator[Path]:
    """The *.md under `folder`, recursively, in path order: hidden folders (.git), node_modules and the
    files that are not post-mortems by name (README, CHANGELOG, templates) are passed over."""
    for path in sorted(folder.rglob("*.md")):
        parts = path.relative_to(folder).parts
        if any(p.startswith(".") or p == "node_modules" for p in parts[:-1]):
            continue
        if path.is_file() and not SKIPPED_NAMES.search(path.stem):
            yield path
