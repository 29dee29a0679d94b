"""A responder's story as the sources read it (fix lines, clauses that tell what a fix did, a post-mortem's
title): the same reading as before. That each reads a long run of whitespace in one pass is
tests/test_free_text_linear.py's sweep."""

import pytest

from oncall_memory.domain.told_fixes import told_fixes
from oncall_memory.sources.comments import fix_line
from oncall_memory.sources.postmortem import _clean_title


@pytest.mark.parametrize(
    "line,read",
    [
        ("Fix: restart the ingress pods => resolved", ("restart the ingress pods", "resolved")),
        ("fix:scale to 6=>mitigated", ("scale to 6", "mitigated")),
        ("Fix: a => b => no-op", ("a => b", "no-op")),  # the last arrow divides them
        ("Fix: roll back => did not help", None),  # the outcome is one word
        ("Fix: => resolved", None),  # no action
        ("We tried a fix: restart => resolved", None),  # a fix line starts with it
    ],
)
def test_a_fix_line_is_its_action_and_outcome(line, read):
    assert fix_line(line) == read


def test_the_clauses_and_titles_read_as_before():
    told = told_fixes("We restarted the consumers, but it did not help; then we raised the memory limit.", "response")
    assert told == [("We restarted the consumers", "no-op")]
    assert _clean_title("Post-mortem:   Checkout   outage (incident #3)") == "Checkout outage"
