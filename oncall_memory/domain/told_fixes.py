"""What a written account says each fix did: "Restarting the Envoy pods beforehand had no effect; rolling back
the config fixed it" is two fixes, one without effect, not one that worked. Read from a post-mortem's
sections, a tracker's description and its comments.
"""

from __future__ import annotations

import re

from .incident import Outcome

FIX_CHARS = 300  # an action as long as this is a paragraph, not a step

# What a sentence says an action did: nothing, harm, or the fix.
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
# "but" is looked for from a run's first space only (the leftmost match starts there anyway): tried from each
# space of a long run, each read the rest of it, quadratic in the run.
_CLAUSES = re.compile(r"(?<=[.;!])\s+|;\s*|,\s+(?:but|and then|then|whereas)\s+|(?<!\s)\s+but\s+", re.I)
_PASSIVE = re.compile(r"\b(?:was|were|is|are|been|got)$", re.I)
# What a clause calls the action of the clause before it: "...; this cleared the backlog".
_BACK_REFERENCE = re.compile(r"^(?:this|that|it|which|doing so|this change|that change|the change)$", re.I)


def effect(clause: str) -> tuple[re.Match[str], Outcome | None] | None:
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
    if effect(text) is None:  # no word about effects: the section's own outcome, as one fix
        return [] if kind == "response" else [(first_sentences(text), default.value)]
    out, previous = [], ""
    for clause in (c.strip(" ,.") for c in _CLAUSES.split(text)):
        said = effect(clause) if len(clause.split()) >= 2 else None
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


def first_sentences(text: str) -> str:
    """A prose resolution as one fix: its first sentences, up to FIX_CHARS."""
    if len(text) <= FIX_CHARS:
        return text
    cut = text[:FIX_CHARS]
    end = max(cut.rfind(". "), cut.rfind("; "))
    return cut[: end + 1] if end > 40 else cut.rsplit(" ", 1)[0] + " …"
