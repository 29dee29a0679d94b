"""A written account's sections, whichever way a template marks them: headings (PagerDuty's and GitLab's
templates), bold labels at the start of a paragraph (Google's SRE workbook), setext headings, "Label: text"
lines, or questions answered on their line (GitLab's incident review). Each section is found by its usual
names and read into the four signal lines; everything else is left out. Post-mortems (`postmortem.py`) and
the trackers' descriptions (`described`) are read this way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..domain.incident import Outcome
from ..domain.told_fixes import FIX_CHARS, told_fixes

# Each signal line is clipped so one long section cannot crowd the others out of the model's window.
MAX_FIXES = 8
CLIP = {"root_cause": 600, "error_signature": 400, "oncall_note": 600, "fix": FIX_CHARS}

# Section names as templates spell them, after `label` (lower case, letters and spaces only).
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

_LABEL_LINE = re.compile(r"^\s*(?P<label>[^\W\d_][\w &/()'’-]{0,40}?)\s*:\s*(?P<rest>.*)$", re.S)
_QUESTION_LINE = re.compile(r"^\s*(?P<label>[^\W\d_][^?\n]{2,120}\?)\s*(?P<rest>.*)$", re.S)
PLACEHOLDER = re.compile(r"^\s*(\[[^\]]*\]|<[^>]*>|_+|\.{3}|tbd|n/?a|-+)?\s*$", re.I)
_md = MarkdownIt("commonmark").enable("table")


def label(text: str) -> str:
    """A heading or label as the tables above spell it: "🔍 Root Cause Analysis (5 whys):" -> "root cause analysis"."""
    text = re.sub(r"\([^)]*\)", " ", text.lower().replace("&", " and "))
    return " ".join(re.sub(r"[^a-z ]+", " ", text).split())


@dataclass
class Reading:
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
        if kind and kind != "skip" and text.strip() and not PLACEHOLDER.match(text):
            self.text.setdefault(kind, []).append(" ".join(text.split()))

    def joined(self, *kinds: str) -> str | None:
        return " ".join(t for k in kinds for t in self.text.get(k, [])) or None


def read_sections(body: str) -> Reading:
    """One pass over the document's blocks: the current section is set by a heading or by a label at the
    start of a paragraph line, and lasts until the next one at the same or a higher level."""
    reading = Reading()
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
            found = SECTIONS.get(label(text))
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
    reading: Reading, line: str, kind: str | None, kind_level: int, heading_level: int, item: list[str] | None
) -> tuple[str | None, int]:
    """One line of text: a "Label: text" line may open a section or state a fact, a known question a section
    ("How was the incident detected? The alert ..."); the rest is the section's."""
    if (question := _QUESTION_LINE.match(line)) and (found := SECTIONS.get(label(question["label"]))) is not None:
        kind, kind_level, line = found, heading_level + 1, question["rest"].strip()
    elif match := _LABEL_LINE.match(line):
        name, rest = label(match["label"]), match["rest"].strip()
        if (found := SECTIONS.get(name)) is not None:
            kind, kind_level = found, heading_level + 1
            line = rest
        elif (key := META.get(name)) in INLINE_META and rest and not PLACEHOLDER.match(rest):
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


def signal_lines(reading: Reading) -> dict[str, Any]:
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


def described(markdown: str) -> dict[str, Any]:
    """The signal lines of a tracker's description (a Jira issue, a GitHub issue, a ServiceNow incident):
    its post-mortem sections when it has them, else the whole text as the error signature (what an
    incident opened from an alert holds)."""
    if not markdown.strip():
        return {}
    reading = read_sections(markdown)
    if not reading.text:
        return {"error_signature": clip_field(markdown, "error_signature")}
    return signal_lines(reading)


def clip_field(text: str | None, field_name: str) -> str | None:
    """`text` on one line, clipped at a word to what `field_name` may hold (CLIP); None when empty."""
    limit = CLIP[field_name]
    text = " ".join((text or "").split())
    if not text or len(text) <= limit:
        return text or None
    return text[:limit].rsplit(" ", 1)[0] + " …"


def _fence_lines(fence: str | None) -> str | None:
    """The first lines of the first fenced block: the log lines or error a post-mortem quotes."""
    if not fence:
        return None
    return " | ".join(line.strip() for line in fence.splitlines()[:5] if line.strip()) or None
