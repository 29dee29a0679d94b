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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from pydantic import ValidationError

from ..domain.incident import Incident, Outcome
from ..ingest.backlog import Rejected, not_text, validation_message
from . import moment

MAX_BYTES = 1 << 20  # a post-mortem is a few pages; a bigger file is an export or an attachment
# Each signal line is clipped so one long section cannot crowd the others out of the model's window.
MAX_FIXES = 8
FIX_CHARS = 300
CLIP = {"root_cause": 600, "error_signature": 400, "oncall_note": 600, "fix": FIX_CHARS}

# Section names as templates spell them, after `_label` (lower case, letters and spaces only).
SECTIONS: dict[str, str] = {}
for _kind, _names in {
    "summary": "summary|overview|executive summary|incident summary|what happened|description|incident description"
    "|leadup|lead up",
    "impact": "impact|customer impact|user impact|business impact|impact and metrics|impact assessment",
    "root_cause": "root cause|root causes|root cause analysis|rca|contributing factors|contributing factor"
    "|causes|cause|why it happened|what went wrong technically|fault",
    "trigger": "trigger|triggers",
    "detection": "detection|detection and response|symptoms|symptom|error|errors|error message|error messages"
    "|error signature|alert|alerts|what we saw",
    "resolution": "resolution|resolution and recovery|fix|the fix|fixes|remediation|how it was fixed|solution"
    "|recovery|how we fixed it",
    "mitigation": "mitigation|mitigations|mitigation steps|immediate mitigation",
    # What responders did, the attempts that failed among it (Atlassian's "Response"; its "Recovery" is
    # the resolution): read for the story and for the fixes it says had no effect.
    "response": "response|incident response|detection and response|response and recovery analysis",
    # GitLab's incident review asks questions and answers them on the same line.
    "skip": "timeline|action items|corrective actions|follow ups|followups|follow up actions|next steps"
    "|lessons learned|lessons|what went well|what went wrong|what can be improved|where we got lucky"
    "|supporting information|responders|messaging|references|glossary|appendix|how d we do|how did we do"
    "|preventive actions|prevention|guidelines|participants|attendees|internal|external|table of contents",
}.items():
    for _name in _names.split("|"):
        SECTIONS[_name] = _kind
for _question, _kind in {
    "how was the incident detected": "detection",
    "how was this incident detected": "detection",
    "what alert fired": "detection",
    "what mitigations were tried": "mitigation",
    "what was done to mitigate": "mitigation",
    "how was the incident mitigated": "mitigation",
    "who was impacted by this incident": "impact",
    "what was the customer experience during the incident": "impact",
    "how many customers were affected": "impact",
    "what was the root cause": "root_cause",
    "what could have been done to improve": "skip",
    "did we have other events in the past with the same root cause": "skip",
}.items():
    SECTIONS[_question] = _kind

# Facts a document states in front matter or on a "Key: value" line, by the names templates use.
META: dict[str, str] = {}
for _key, _names in {
    "title": "title|incident title",
    "id": "id|incident|incident id",
    "service": "service|services|service affected|services affected|affected service|affected services",
    "severity": "severity|sev|priority|incident severity",
    "opened_at": "date|started|start|started at|opened|opened at|start time|incident date|detected",
    "resolved_at": "resolved|resolved at|ended|end|end time|ended at",
    "env": "env|environment",
    "flavor": "flavor|platform",
    "component_tags": "tags|components|component|labels",
    "status": "status",
    "url": "url|link",
}.items():
    for _name in _names.split("|"):
        META[_name] = _key
# In running text only these are believed: "Status: Complete, action items in progress" is not a status.
INLINE_META = {"title", "service", "severity", "opened_at", "resolved_at", "env"}

SKIPPED_NAMES = re.compile(r"^(readme|changelog|contributing|license|index)\b|template", re.I)

_LABEL_LINE = re.compile(r"^\s*(?P<label>[^\W\d_][\w &/()'’-]{0,40}?)\s*:\s*(?P<rest>.*)$", re.S)
_QUESTION_LINE = re.compile(r"^\s*(?P<label>[^\W\d_][^?\n]{2,120}\?)\s*(?P<rest>.*)$", re.S)
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
_PLACEHOLDER = re.compile(r"^\s*(\[[^\]]*\]|<[^>]*>|_+|\.{3}|tbd|n/?a|-+)?\s*$", re.I)
_FRONT_MATTER_END = re.compile(r"^(---|\.\.\.)\s*$", re.M)
_md = MarkdownIt("commonmark").enable("table")


def _label(text: str) -> str:
    """A heading or label as the tables above spell it: "🔍 Root Cause Analysis (5 whys):" -> "root cause analysis"."""
    text = re.sub(r"\([^)]*\)", " ", text.lower().replace("&", " and "))
    return " ".join(re.sub(r"[^a-z ]+", " ", text).split())


@dataclass
class _Reading:
    """What one pass over a document collected."""

    title: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    text: dict[str, list[str]] = field(default_factory=dict)
    fixes: list[tuple[str, str]] = field(default_factory=list)  # (action, outcome)
    first_fence: str | None = None
    prose: list[str] = field(default_factory=list)  # text under no known section (a page's plain body)

    def add(self, kind: str | None, text: str) -> None:
        if kind is None and text.strip():
            self.prose.append(" ".join(text.split()))
        if kind and kind != "skip" and text.strip() and not _PLACEHOLDER.match(text):
            self.text.setdefault(kind, []).append(" ".join(text.split()))

    def joined(self, *kinds: str) -> str | None:
        return " ".join(t for k in kinds for t in self.text.get(k, [])) or None


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
    reading = _read(body)
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


def _from_prose(reading: _Reading) -> _Reading:
    """A body written as prose under front matter (a Jekyll or Hugo post-mortem page): its sentences that
    give a cause are the root cause, the story is the on-call note, and what it says was done, with what
    effect, are the fixes."""
    text = " ".join(reading.prose)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    causes = [s for s in sentences if _CAUSE.search(s)]
    reading.text = {"summary": [text]}
    if causes:
        reading.text["root_cause"] = causes
    reading.fixes = told_fixes(text, "resolution") if _effect(text) else []
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


def _read(body: str) -> _Reading:
    """One pass over the document's blocks: the current section is set by a heading or by a label at the
    start of a paragraph line, and lasts until the next one at the same or a higher level."""
    reading = _Reading()
    kind: str | None = None
    kind_level = 7  # heading level that set `kind` (a label sets it at the level of the heading above it)
    heading_level = 0
    item_depth = 0  # nesting of list items: top-level items of a resolution are its fixes
    item: list[str] | None = None  # the text of the open top-level list item
    tokens = _md.parse(body)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open":
            level = int(token.tag[1])
            text = _plain(tokens[i + 1])
            i += 3
            if level == 1 and reading.title is None:
                reading.title = text
                kind, kind_level = None, 7
                continue
            found = SECTIONS.get(_label(text))
            heading_level = level
            if found is not None:
                kind, kind_level = found, level
            elif level <= kind_level:
                kind, kind_level = None, 7  # an unknown section of its own (e.g. "Background")
            continue
        if token.type == "list_item_open":
            item_depth += 1
            if item_depth == 1:
                item = []
        elif token.type == "list_item_close":
            item_depth -= 1
            if item_depth == 0 and item is not None:
                if kind in ("resolution", "mitigation", "response") and " ".join(item).strip():
                    reading.fixes += told_fixes(" ".join(item), kind)
                item = None
        elif token.type in ("fence", "code_block"):
            if reading.first_fence is None and kind not in ("skip",) and token.content.strip():
                reading.first_fence = token.content
        elif token.type == "inline":
            for line in _plain(token).split("\n"):
                kind, kind_level = _line(reading, line, kind, kind_level, heading_level, item)
        i += 1
    return reading


def _line(
    reading: _Reading, line: str, kind: str | None, kind_level: int, heading_level: int, item: list[str] | None
) -> tuple[str | None, int]:
    """One line of text: a "Label: text" line may open a section or state a fact, a known question a section
    ("How was the incident detected? The alert ..."); the rest is the section's."""
    if (question := _QUESTION_LINE.match(line)) and (found := SECTIONS.get(_label(question["label"]))) is not None:
        kind, kind_level, line = found, heading_level + 1, question["rest"].strip()
    elif match := _LABEL_LINE.match(line):
        label, rest = _label(match["label"]), match["rest"].strip()
        if (found := SECTIONS.get(label)) is not None:
            kind, kind_level = found, heading_level + 1
            line = rest
        elif (key := META.get(label)) in INLINE_META and rest and not _PLACEHOLDER.match(rest):
            reading.meta.setdefault(key, rest)
            return kind, kind_level
    reading.add(kind, line)
    if item is not None and kind in ("resolution", "mitigation", "response") and line.strip():
        item.append(line)
    return kind, kind_level


def _plain(inline: Token) -> str:
    """An inline token's words without markup: emphasis and links dropped, code kept, line breaks kept."""
    out = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif child.type == "image":
            out.append(child.content)
    return "".join(out)


def _fields(
    front: dict[str, Any], reading: _Reading, doc_id: str, url: str | None, path: Path
) -> tuple[dict[str, Any], str | None]:
    """The incident's fields; a front-matter value that cannot be used is an error that names it."""
    meta: dict[str, Any] = dict(reading.meta)
    for raw_key, value in front.items():
        key = META.get(_label(raw_key)) if isinstance(raw_key, str) else None
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


def signal_lines(reading: _Reading) -> dict[str, Any]:
    """root_cause, error_signature, oncall_note and fixes_attempted from what a reading found."""
    fields: dict[str, Any] = {
        "root_cause": clip_field(reading.joined("root_cause", "trigger"), "root_cause"),
        "error_signature": clip_field(
            " ".join(filter(None, [reading.joined("detection"), _fence_lines(reading.first_fence)]))
            or reading.joined("impact"),
            "error_signature",
        ),
        "oncall_note": clip_field(reading.joined("summary", "resolution", "mitigation", "response"), "oncall_note"),
    }
    fixes = list(reading.fixes)
    listed = {kind for kind in ("resolution", "mitigation") if any(o != Outcome.no_op.value for _, o in fixes)}
    for kind in ("response", "resolution", "mitigation"):  # sections written as prose, not as a list
        if kind not in listed and (prose := reading.joined(kind)) and not any(a in prose for a, _ in fixes):
            fixes += told_fixes(prose, kind)
    fields["fixes_attempted"] = [{"action": a[:FIX_CHARS], "outcome": o} for a, o in dict.fromkeys(fixes)][:MAX_FIXES]
    return fields


# What a sentence says an action did: nothing, harm, or the fix. "Restarting the Envoy pods beforehand had no
# effect; rolling back the config fixed it" is two fixes, one without effect, not one that worked.
_NO_EFFECT = re.compile(
    r"\b(?:had no (?:visible |noticeable )?effect|(?:with|to) no (?:effect|avail)|without (?:any )?effect"
    r"|did(?: not|n't) (?:help|work|fix|change|resolve|improve)\w*|(?:was|were) not enough|made no difference"
    r"|did nothing|no improvement|failed to (?:help|fix|resolve|recover))",
    re.I,
)
_WORSE = re.compile(r"\b(?:made (?:it|things|the (?:problem|issue|outage)|matters) worse|worsened|backfired)", re.I)
_WORKED = re.compile(
    r"\b(?:fixed|resolved|restored|solved|cleared|recovered|resumed|brought (?:it|them|\w+) back|ended the"
    r"|back to normal)\b",
    re.I,
)
_CLAUSES = re.compile(r"(?<=[.;!])\s+|;\s*|,\s+(?:but|and then|then|whereas)\s+|\s+but\s+", re.I)
_PASSIVE = re.compile(r"\b(?:was|were|is|are|been|got)$", re.I)
# What a clause calls the action of the clause before it: "...; this cleared the backlog".
_BACK_REFERENCE = re.compile(r"^(?:this|that|it|which|doing so|this change|that change|the change)$", re.I)


def _effect(clause: str) -> tuple[re.Match[str], Outcome | None] | None:
    """What a clause says its action did (None in the outcome: it fixed it), and where it says so."""
    for pattern, outcome in ((_NO_EFFECT, Outcome.no_op), (_WORSE, Outcome.worsened), (_WORKED, None)):
        if match := pattern.search(clause):
            return match, outcome
    return None


def told_fixes(text: str, kind: str) -> list[tuple[str, str]]:
    """The fixes a section's text tells of, each with the outcome its own words give it (no effect, worse,
    fixed), else the section's: resolution "resolved", mitigation "mitigated". A response section gives only
    the attempts that failed (its successes are told by the resolution)."""
    text = " ".join(text.split())
    default = Outcome.mitigated if kind == "mitigation" else Outcome.resolved
    if _effect(text) is None:  # no word about effects: the section's own outcome, as one fix
        return [] if kind == "response" else [(_first_sentences(text), default.value)]
    out, previous = [], ""
    for clause in (c.strip(" ,.") for c in _CLAUSES.split(text)):
        said = _effect(clause) if len(clause.split()) >= 2 else None
        if said is None:
            previous = clause  # a sentence of the story, or an action the next one says the outcome of
            continue
        match, outcome = said
        before = clause[: match.start()].strip(" ,.")
        # "..., which did not help", "...freed 400 GB and writes resumed": the action, not the next subject
        before = re.sub(r"[\s,]+(?:which|that|it|this|and \w+)$", "", before, flags=re.I)
        # "...; this cleared the backlog", "...; search recovered", "...; the outage was resolved": the
        # outcome of the action before (none before a passive one: the problem was fixed, by what is not said).
        passive = _PASSIVE.search(before) is not None
        if previous and (passive or _BACK_REFERENCE.match(before) or len(before.split()) < 3):
            action = previous
        elif passive:
            continue
        else:
            action = before if len(before.split()) >= 2 else clause
        previous = ""
        if outcome is None and kind == "response":
            continue
        out.append((action[:FIX_CHARS], (outcome or default).value))
    return out


def described(markdown: str) -> dict[str, Any]:
    """The signal lines of a tracker's description (a Jira issue, a GitHub issue, a ServiceNow incident):
    its post-mortem sections when it has them, else the whole text as the error signature (what an
    incident opened from an alert holds)."""
    if not markdown.strip():
        return {}
    reading = _read(markdown)
    if not reading.text:
        return {"error_signature": clip_field(markdown, "error_signature")}
    return signal_lines(reading)


def _moment(value: Any) -> dt.datetime | None:
    """A date as front matter or a "Date:" line gives it (YAML already turns 2025-03-14 into a date)."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return moment(str(value))


def _clean_title(title: str) -> str:
    title = _TITLE_LEAD.sub("", title)
    cleaned = " ".join(_TITLE_NOISE.sub(" ", _TITLE_NOISE.sub(" ", title)).split())  # "X Postmortem (incident #3)"
    return cleaned or " ".join(title.split())


def _stem_title(path: Path) -> str:
    """`2024-03-05-db-failover.md` -> "db failover"."""
    words = re.sub(r"^\d{4}-\d{2}-\d{2}[-_ ]*", "", path.stem).replace("-", " ").replace("_", " ")
    return words.strip() or path.stem


def clip_field(text: str | None, field_name: str) -> str | None:
    """`text` on one line, clipped at a word to what `field_name` may hold (CLIP); None when empty."""
    limit = CLIP[field_name]
    text = " ".join((text or "").split())
    if not text or len(text) <= limit:
        return text or None
    return text[:limit].rsplit(" ", 1)[0] + " …"


def _first_sentences(text: str) -> str:
    """A prose resolution as one fix: its first sentences, up to FIX_CHARS."""
    if len(text) <= FIX_CHARS:
        return text
    cut = text[:FIX_CHARS]
    end = max(cut.rfind(". "), cut.rfind("; "))
    return cut[: end + 1] if end > 40 else cut.rsplit(" ", 1)[0] + " …"


def _fence_lines(fence: str | None) -> str | None:
    """The first lines of the first fenced block: the log lines or error a post-mortem quotes."""
    if not fence:
        return None
    return " | ".join(line.strip() for line in fence.splitlines()[:5] if line.strip()) or None


def documents(folder: Path) -> Iterator[Path]:
    """The *.md under `folder`, recursively, in path order: hidden folders (.git), node_modules and the
    files that are not post-mortems by name (README, CHANGELOG, templates) are passed over."""
    for path in sorted(folder.rglob("*.md")):
        parts = path.relative_to(folder).parts
        if any(p.startswith(".") or p == "node_modules" for p in parts[:-1]):
            continue
        if path.is_file() and not SKIPPED_NAMES.search(path.stem):
            yield path
