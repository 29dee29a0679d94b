"""Every reader of free text (an alert's, an incident's, a note's) reads a long run of spaces or line breaks in
one pass. Seven took time quadratic in such a run (2026-12-04): Alertmanager's subject and template lines,
PagerDuty's reading of a title, the noise cleaning's dangling space, the ranking's rare tokens, `Fix:` lines,
the clauses that tell what a fix did and a post-mortem's title. A field may hold 64 Ki characters."""

import time

import pytest

from oncall_memory.answer.wording import headline, rare_tokens, title_key
from oncall_memory.domain.annotations import repeats, texts
from oncall_memory.domain.label_facts import facts_from_labels, tag_labels
from oncall_memory.domain.lexical import sparse_vector, terms
from oncall_memory.domain.noise import alarm_subject, monitor_title, strip_ceremony, strip_noise, subject
from oncall_memory.domain.signature import canonical_signature
from oncall_memory.domain.told_fixes import told_fixes
from oncall_memory.domain.vocabulary import symptoms
from oncall_memory.sources.comments import fix_line
from oncall_memory.sources.postmortem import _clean_title

READERS = {
    "strip_noise": strip_noise,
    "strip_ceremony": strip_ceremony,
    "subject": subject,
    "monitor_title": monitor_title,
    "alarm_subject": alarm_subject,
    "tag_labels": tag_labels,
    "canonical_signature": lambda t: canonical_signature(t, ["prod"]),
    "terms": terms,
    "sparse_vector": sparse_vector,
    "symptoms": symptoms,
    "annotation texts": lambda t: texts({"summary": t, "description": t}),
    "repeats": lambda t: repeats([t], t),
    "label facts": lambda t: facts_from_labels({"service": t, "pod": t, "namespace": t, "node": t}),
    "rare_tokens": rare_tokens,
    "title_key": title_key,
    "headline": headline,
    "fix_line": fix_line,
    "told_fixes": lambda t: told_fixes(t, "response"),
    "post-mortem title": _clean_title,
}
# What each reader's patterns start from: a pager's subject, a number, a template line, a code word, a fix
# line, a post-mortem's heading, a clause, a month, a Datadog monitor's title, a CloudWatch alarm's subject.
LEADS = [
    "",
    "[FIRING:1]x",
    "[P2] [Triggered on {a:b",
    "[Warn]",
    "x1 ",
    "Labels:\n",
    "exit",
    "fix: a",
    "post-mortem",
    "done, but",
    "Jan",
]


@pytest.mark.parametrize("run", [" ", "\n", "\t", " \n"], ids=["spaces", "line breaks", "tabs", "blank lines"])
@pytest.mark.parametrize("reader", READERS)
def test_a_run_of_whitespace_is_read_in_one_pass(reader, run):
    read = READERS[reader]
    for lead in LEADS:
        text = lead + run * (32_768 // len(run)) + "y (b)d: 1"
        started = time.process_time()
        read(text)
        # Linear: milliseconds. Quadratic at this size: seconds to minutes. 1 s of CPU is the margin.
        assert time.process_time() - started < 1.0, (reader, lead)
