"""The text an alert carries beside its name: an Alertmanager rule's annotations, Grafana's, a PagerDuty
event's custom details, an Opsgenie alert's details. Read by one rule, not a list of two keys, because every
team writes its own: `summary` and `description` (today's mixins), `message` (Cortex, Loki, Mimir, older
kube-prometheus and Thanos rules), `title`, `info`, a misspelt `descripton`.

- Links are left out: a key that names one (`runbook_url`, `runbook`, `dashboard`, `generatorURL`) and any
  value that is only a URL or a path.
- So are values that are not prose: ids, queries, numbers (`__dashboardUid__`, `correlationId`,
  `grafana_panel_id`, `promql_query`), and what a pager says about the rule rather than what the rule says
  (a folder's name, the reason a state changed: `grafana_folder`, `grafana_state_reason`); a value of another
  key counts as text when it holds two words or more.
- The headline comes first: `summary`, else `message`, else `title`, else the first other text; the rest
  follow in the order the sender wrote them, each once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

HEADLINES = ("summary", "message", "title")
# Keys whose value is text whenever it is not a link, even as one word ("Down.").
PROSE = (*HEADLINES, "description")

# Keys that name a link, an id or a query, whatever their value holds.
_NOT_TEXT = re.compile(
    r"^__|url$|uri$|link$|href$|^runbook|^playbook|^dashboard|^panel|^silence|^generator|^image"
    r"|query$|^expr|promql|(?:^|[_.-])u?id$|^fingerprint$|folder$|state_reason$",
    re.I,
)
_CAMEL_ID = re.compile(r"[a-z](?:Id|ID|Uid|UID)$")  # correlationId, orgId: case tells these from "said"
_LINK = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|www\.)\S*$", re.I)
_PATH = re.compile(r"^\.{0,2}/?(?:[\w.-]+/)+[\w.#-]*$")  # docs/monitoring/alertmanager-failures.md
_WORD = re.compile(r"[^\W\d_]{2,}")  # a run of two letters or more, in any script
# Bounds on what a stranger's details can make us walk: a pager nests a few levels and a few dozen keys.
MAX_DEPTH, MAX_VALUES = 4, 200


def _is_text(key: str, value: str) -> bool:
    if not value or _LINK.match(value) or _PATH.match(value):
        return False
    if key.lower() in PROSE:
        return bool(_WORD.search(value))
    return len(_WORD.findall(value)) >= 2 and " " in value


@lru_cache(maxsize=1024)  # a storm's alerts repeat their annotation keys: each key is judged once
def _may_be_text(key: str) -> bool:
    return not _NOT_TEXT.search(key) and not _CAMEL_ID.search(key)


def _flat(details: Any, key: str = "", depth: int = 0) -> Iterable[tuple[str, str]]:
    """(key, text) pairs of a details object, nested objects and lists read in order; a nested key is named
    by its innermost name (`{"error": {"message": ...}}` is a message)."""
    if isinstance(details, str):
        yield key, details.strip()
    elif isinstance(details, Mapping) and depth < MAX_DEPTH:
        for k, v in details.items():
            if isinstance(k, str) and _may_be_text(k):
                if isinstance(v, str):  # the usual annotation, read without a generator of its own
                    yield k, v.strip()
                else:
                    yield from _flat(v, k, depth + 1)
    elif isinstance(details, list) and depth < MAX_DEPTH:
        for v in details:
            yield from _flat(v, key, depth + 1)


def texts(annotations: Any, skip: Iterable[str] = ()) -> list[str]:
    """The texts in `annotations` (a mapping, nested or not), the headline first, each once; `skip`: texts
    the caller already has (the alert's own name)."""
    seen = {_key(s) for s in skip}
    found: list[tuple[str, str]] = []
    for key, value in _flat(annotations):
        if len(found) >= MAX_VALUES:
            break
        if _is_text(key, value) and _key(value) not in seen:
            seen.add(_key(value))
            found.append((key.lower(), value))
    for headline in HEADLINES:
        at = next((i for i, (k, _) in enumerate(found) if k == headline), None)
        if at is not None:
            found.insert(0, found.pop(at))
            break
    return [value for _, value in found]


def repeats(texts: Iterable[str], text: str) -> bool:
    """Does any of `texts` say the same as `text`, as `texts` tells repeats (spacing and case aside)?"""
    key = _key(text)
    return any(_key(t) == key for t in texts)


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()
