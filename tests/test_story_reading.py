"""A responder's story as the sources read it (fix lines, clauses that tell what a fix did, a post-mortem's
title): the same reading as before, in one pass over what a stranger may have written."""

import time

import pytest

from oncall_memory.sources.comments import fix_line
from oncall_memory.sources.postmortem import _clean_title
from oncall_memory.sources.told_fixes import told_fixes


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


@pytest.mark.parametrize(
    "read",
    [
        lambda: fix_line("Fix: " + " " * 65_536 + "x"),
        lambda: told_fixes("Restarted the pods" + " " * 65_536 + "x; this cleared the backlog.", "response"),
        lambda: told_fixes("Restarted the pods" + "\n" * 65_536 + "but it did not help.", "response"),
        lambda: _clean_title("Post-mortem" + " \n" * 32_768 + "for the checkout outage"),
    ],
    ids=["a fix line of spaces", "a clause after a run of spaces", "then blank lines", "a title of spaces"],
)
def test_reading_a_run_of_spaces_is_linear(read):
    # Each took time quadratic in the run (a lazy action, or "but", looked for from every space; optional
    # spaces around optional words). Now milliseconds for 64 Ki characters; the bound leaves 100x room.
    started = time.process_time()
    read()
    assert time.process_time() - started < 1.0


def test_the_clauses_and_titles_read_as_before():
    told = told_fixes("We restarted the consumers, but it did not help; then we raised the memory limit.", "response")
    assert told == [("We restarted the consumers", "no-op")]
    assert _clean_title("Post-mortem:   Checkout   outage (incident #3)") == "Checkout outage"
