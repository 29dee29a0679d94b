"""The metrics a rule watches, read from the link to its expression that a Prometheus-style ruler sends with
each alert (`generatorURL`: `<prometheus>/graph?g0.expr=<the rule's PromQL>&g0.tab=1`).

Alertmanager's default templates for PagerDuty's custom details and Opsgenie's description list each firing
alert with its link ("Source: <generatorURL>"), read back by `alert_list`.

A rule's message says what broke in a team's words; its expression names the metric, and runbooks and
post-mortems name metrics too ("the metric for this alert is `tempodb_compaction_errors_total`"). The
names are read from the expression without a PromQL parser: string literals, label matchers, ranges,
grouping clauses and numbers are dropped, and what is left that is spelt like a metric (letters, digits,
`_` and `:`, with at least one `_` or `:`) and is not called like a function is a metric's name. A name
without either (`up`) is a word any text may hold, so it is left to the alert's own words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qs, urlsplit

# Bounds on what a stranger's link can make us read: a real rule's expression is a few hundred characters.
MAX_EXPR = 4_000
MAX_METRICS = 12
MAX_LINK = 4 * MAX_EXPR  # an expression escaped in a link: a longer link is not read at all

_COMMENT = re.compile(r"#[^\n]*")  # to the end of the line, as in PromQL
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\[\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", re.I)
_NUMBER = re.compile(r"(?<![\w:])(?:0x[0-9a-f]+|\d[\d_]*(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)", re.I)
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_CALLED = re.compile(r"\s*\(")
# Keywords spelt like metrics: PromQL's, without their parentheses; LogQL's pipeline stages (a Loki ruler's
# expression is LogQL, whose selectors and filters are strings and matchers, dropped above).
_KEYWORDS = frozenset({"group_left", "group_right", "line_format", "label_format", "__error__"})


def is_metric_name(name: str) -> bool:
    """Spelt like a metric's name: letters, digits, `_` and `:`, not starting with a digit, with a `_` or `:`
    inside it (a bare word, `up`, is any text's)."""
    return bool(_NAME.fullmatch(name)) and ("_" in name.strip("_") or ":" in name)


def metric_names(expr: str) -> list[str]:
    """The metrics `expr` (PromQL) selects, in the order it names them, each once."""
    text = _STRING.sub(" ", expr[:MAX_EXPR])
    for pattern in (_COMMENT, _MATCHERS, _RANGE, _GROUPING, _NUMBER):
        text = pattern.sub(" ", text)
    found: list[str] = []
    for m in _NAME.finditer(text):
        name = m.group()
        if _CALLED.match(text, m.end()) or name in _KEYWORDS:
            continue  # a function (`rate(`, `histogram_quantile(`), an aggregation, a keyword
        if is_metric_name(name) and name not in found:
            found.append(name)
            if len(found) >= MAX_METRICS:
                break
    return found


def watched_metrics(generator_url: str | None) -> list[str]:
    """The metrics named by the expression in a ruler's `generatorURL` (each `g<n>.expr` of its query);
    none when the link carries no expression (Grafana's links, a ruler that sends none)."""
    if not generator_url or len(generator_url) > MAX_LINK:
        return []
    return list(_watched(generator_url))


@lru_cache(maxsize=256)  # a storm's alerts are a few rules': each link is read once (40 µs a link)
def _watched(generator_url: str) -> tuple[str, ...]:
    try:
        query = parse_qs(urlsplit(generator_url).query, max_num_fields=20)
    except ValueError:
        return ()
    found: list[str] = []
    for key, values in query.items():
        if re.fullmatch(r"g\d+\.expr", key):
            for value in values:
                found += [n for n in metric_names(value) if n not in found]
    return tuple(found[:MAX_METRICS])
