"""Facts from an alert pasted as text (the search page): what the webhooks read from labels, read from the
words a responder copies out of a page, a Slack message or a terminal.

Three sources, the first that gives a fact wins:
1. JSON: an Alertmanager alert (`labels`) or webhook (`alerts[0].labels`), read as the webhook reads it;
2. `label=value` / `label: value` / `label="value"` pairs in the text (Alertmanager's and Prometheus'
   own notation), read through the same label mapping (`ONCALL_MEMORY_LABEL_FACTS`);
3. a service, env or flavor the memory knows, named as a word of the text ("checkout ... on shop-prod").

Linear in the text: one bounded pass per pattern (RE2), and the text is capped before parsing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import re2

from .label_facts import facts_from_labels

MAX_TEXT = 20_000
FACTS = ("service", "env", "flavor")
_PAIR = re2.compile(r'([A-Za-z_][A-Za-z0-9_.\-]{0,62})\s*[=:]\s*"?([A-Za-z0-9_.\-/]{1,128})"?')
_WORD = re2.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}")


def pasted_facts(
    text: str,
    known: Mapping[str, Iterable[str]] | None = None,
    mapping: Mapping[str, list[str]] | None = None,
) -> dict[str, tuple[str, str]]:
    """fact -> (value, where it came from) for service, env and flavor."""
    text = text[:MAX_TEXT]
    found: dict[str, tuple[str, str]] = {}
    labels = _json_labels(text)
    how = "the alert's labels"
    if labels is None:
        labels = {name: value for name, value in _PAIR.findall(text)}
        how = "the alert's label pairs"
    if labels:
        facts = facts_from_labels(labels, mapping, known)
        for fact in FACTS:
            if isinstance(facts.get(fact), str):
                source = facts.get("fact_sources", {}).get(fact, "a label")
                found[fact] = (facts[fact], f"{how} ({source})")
    words = {w.lower(): w for w in _WORD.findall(text)}
    for fact in FACTS:
        if fact in found:
            continue
        for value in sorted((known or {}).get(fact, ()), key=len, reverse=True):  # the longest name first
            if value.lower() in words:
                found[fact] = (value, "named in the alert")
                break
    return found


def _json_labels(text: str) -> dict[str, str] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        data: Any = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return None
    if isinstance(data, dict) and isinstance(data.get("alerts"), list) and data["alerts"]:
        data = data["alerts"][0]
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(labels, dict):
        return None
    return {k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)}
