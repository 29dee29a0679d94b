"""Alertmanager's default text list of alerts, read back. Its PagerDuty receiver puts the firing alerts in the
custom details (`firing`) and its Opsgenie receiver in the description, each written by the template
`__text_alert_list`:

    Labels:
     - alertname = KubePodCrashLooping
     - namespace = checkout
    Annotations:
     - description = Pod checkout/checkout-7d9c6b8f5-x2kq9 is restarting 3 times / 10 minutes.
     - summary = Pod is crash looping.
    Source: http://prometheus-k8s.monitoring:9090/graph?g0.expr=...

(Grafana's version adds a `Value:` line and silence and dashboard links.) Read as text, every line is pager
ceremony (`noise.strip_ceremony` drops them all, the label lines rightly); read back, each alert's
annotations are its rule's texts and its `Source:` the link to its expression, as Alertmanager's own webhook
carries them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .annotations import texts
from .promql import watched_metrics

_ITEM = re.compile(r"^[ \t]*-[ \t]*([\w.]+)[ \t]*(?:=|:)[ \t]?(.*)$")
_HEADING = re.compile(r"^[ \t]*(?:\*\*)?(Labels|Annotations)(?:\*\*)?:?[ \t]*$", re.I)
_SOURCE = re.compile(r"^[ \t]*(?:\*\*)?Source:?(?:\*\*)?[ \t]*(\S+)", re.I)
_KEYED_LINK = re.compile(r"^[ \t]*\w+:[ \t]*https?://", re.I)
MAX_ALERTS = 20  # a storm's list: the first alerts say what the rest do


@dataclass
class ListedAlert:
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    source: str | None = None


@dataclass
class _Parts:  # an alert being read: each value's lines, joined once at the end (linear in the text)
    labels: dict[str, list[str]] = field(default_factory=dict)
    annotations: dict[str, list[str]] = field(default_factory=dict)
    source: str | None = None


def read_alert_list(text: str) -> list[ListedAlert]:
    """The alerts of a text list, in order; none when `text` is not one (no `Labels:` heading with items)."""
    if "Labels" not in text and "labels" not in text:
        return []
    alerts: list[_Parts] = []
    into: dict[str, list[str]] | None = None
    last = ""
    for line in text.splitlines():
        if heading := _HEADING.match(line):
            if heading.group(1).lower() == "labels":
                if len(alerts) >= MAX_ALERTS:
                    break
                alerts.append(_Parts())
                into = alerts[-1].labels
            elif alerts:
                into = alerts[-1].annotations
        elif (item := _ITEM.match(line)) and into is not None:
            last = item.group(1)
            into.setdefault(last, [item.group(2).strip()])
        elif (source := _SOURCE.match(line)) and alerts:
            alerts[-1].source = source.group(1)
            into = None
        elif into is not None and alerts and into is alerts[-1].annotations and last in into and line.strip():
            if _KEYED_LINK.match(line):
                into = None  # Grafana's "Silence: <link>", "Dashboard: <link>" after the annotations
            else:
                into[last].append(line.strip())  # an annotation of several lines
        elif not line.strip():
            continue
        else:
            into = None
    return [
        ListedAlert(
            {k: " ".join(v) for k, v in a.labels.items()}, {k: " ".join(v) for k, v in a.annotations.items()}, a.source
        )
        for a in alerts
        if a.labels or a.annotations
    ]


def first_alert(text: str, skip: Iterable[str] = ()) -> tuple[list[str], list[str]] | None:
    """The first alert of a text list (a group's alerts are one rule's): its annotations' texts, headline first
    (`annotations.texts`), and the metrics of its rule (`promql`), from its `Source:` link; None when `text`
    is not a list."""
    found = read_alert_list(text)
    return (texts(found[0].annotations, skip=skip), watched_metrics(found[0].source)) if found else None


def listed_texts(details: Mapping[str, Any], skip: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """The texts of a pager's details (`annotations.texts`) with an alert list among them read back: the first
    listed alert's annotations first, then the other details' texts; and its rule's metrics (`first_alert`)."""
    listed, rest = None, {}
    for key, value in details.items():
        read = first_alert(value, skip) if isinstance(value, str) and listed is None else None
        if read is None:
            rest[key] = value
        else:
            listed = read
    if listed is None:
        return texts(details, skip=skip), []
    said, metrics = listed
    return said + texts(rest, skip=[*skip, *said]), metrics
