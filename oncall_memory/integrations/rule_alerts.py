"""An alert a rule fired, as Prometheus-style rulers post it: its labels, its annotations, when it started and
its fingerprint. Alertmanager's webhook, Grafana Alerting's contact point and the rulers behind them (Mimir,
Loki, Thanos) all send alerts of this shape; each pager's package reads its own envelope and leaves the
alerts to this module: the alert to look up, the heading that tells it from its group, a group's job key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..domain.alert import Alert
from ..domain.annotations import repeats, texts
from ..domain.label_facts import facts_from_labels, is_exporter
from ..domain.promql import watched_metrics
from ..domain.rule_words import expression_words, says_something, without_leftovers, words_of_name
from ..jobs import Item, Job


class RuleAlert(BaseModel):
    """One alert of a group, read leniently (rulers add fields over time)."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)

    status: str
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    startsAt: str
    fingerprint: str
    # A Prometheus-style ruler's link to the rule's expression, read for its metrics only: a sender's odd value
    # (a number, an object) is no link, not a bad alert, as before the link was read at all (the API's schema
    # says any value).
    generatorURL: Any = None


def rule_alert(
    a: RuleAlert,
    mapping: Mapping[str, list[str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
    *,
    written: list[str] | None = None,
) -> Alert | None:
    """The alert to look up: its rule's name and every text its annotations carry, the headline first
    (`annotations.texts`: `summary`, `message`, `title`, any key a team invents; links left out), facts from
    its labels, and the metrics its rule watches from the ruler's link to the expression (`promql`). None when
    it has no text at all. (Measured and dropped: removing the label values a description
    repeats, which lowered MRR on the pager set; and writing the rule's name as words, six ways, each meeting
    fewer of the per-style goals: docs/evaluation.md, "A rule's name written as its words".)
    `written`: the annotations' texts, when the caller has read them already (`texts(a.annotations)`)."""
    return _alert(a, texts(a.annotations) if written is None else written, mapping, known)


def _alert(
    a: RuleAlert, written: list[str], mapping: Mapping[str, list[str]] | None, known: Mapping[str, Iterable[str]] | None
) -> Alert | None:
    """`rule_alert`, given the annotations' texts (`texts(a.annotations)`, read once for the alert and its
    item): those that repeat the rule's name are left out, as `texts(..., skip=[name])` leaves them."""
    name = a.labels.get("alertname", "").strip()
    if name and repeats(written, name):
        written = texts(a.annotations, skip=[name])
    written = [t for t in (without_leftovers(w) for w in written) if t]
    link = a.generatorURL if isinstance(a.generatorURL, str) else None
    if name and not any(says_something(w) for w in written):
        # Name-only (issue 82): its summary repeats its name, or lists labels. The rule's name and what its
        # expression watches, as words, are all the alert says of itself.
        words = " ".join(p for p in (words_of_name(name), expression_words(link)) if p)
        text = " - ".join(p for p in (name, words) if p)
    else:
        text = " - ".join(p for p in (name, *written) if p)
    if not text:
        return None
    metrics = watched_metrics(link)
    return Alert(text=text, metrics=metrics, **facts_from_labels(a.labels, mapping, known))


def has_text(a: RuleAlert) -> bool:
    """Would `rule_alert` find any text (its rule's name, or an annotation's)? The test `_alert` makes, without
    building the alert: a group claimed before it is read counts what it will ignore."""
    return bool(a.labels.get("alertname", "").strip() or texts(a.annotations))


def alert_key(a: RuleAlert, prefix: str) -> str:
    """`<prefix>:<fingerprint>:<startsAt>`: the same alert redelivered has the same key."""
    return f"{prefix}:{a.fingerprint}:{a.startsAt}"


def rule_alert_item(
    a: RuleAlert,
    prefix: str,
    mapping: Mapping[str, list[str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
    runbook: str | None = None,
) -> Item | None:
    """`rule_item(a, prefix, rule_alert(a, ...))`, the annotations read once (a storm's ten thousand alerts);
    None when the alert has no text at all."""
    written = texts(a.annotations)
    alert = _alert(a, written, mapping, known)
    return None if alert is None else _item(a, prefix, alert, written, runbook)


def rule_item(
    a: RuleAlert, prefix: str, alert: Alert, runbook: str | None = None, *, written: list[str] | None = None
) -> Item:
    """The alert as a job's item: keyed by `<prefix>:<fingerprint>:<startsAt>`, named by its heading, its
    annotations' texts (`written`, when read already) as the detail line."""
    return _item(a, prefix, alert, texts(a.annotations) if written is None else written, runbook)


def _item(a: RuleAlert, prefix: str, alert: Alert, written: list[str], runbook: str | None) -> Item:
    return Item(
        key=alert_key(a, prefix),
        alert=alert,
        title=heading(a) or alert.text,
        detail=" — ".join(written) or None,
        runbook=runbook,
        rule=a.labels.get("alertname", "").strip()[:200] or None,
    )


# A group of more firing alerts than this is claimed by its alerts' keys and read after its claim, on the
# worker's thread (`unread_job`, `Webhook.read`). Read one by one before the claim, a storm's 10,000 alerts
# were 0.6 s of its 202 (about 60 µs an alert: the annotations' texts, the labels' facts, the models); a
# group this size is read at once in a few milliseconds.
READ_AT_ONCE = 100


def unread_job(
    prefix: str, alerts: Sequence[RuleAlert], posted: Sequence[Any], group: str | None, name: str | None
) -> tuple[list[Job], int]:
    """A group's firing alerts as one job that holds them as they were `posted` (the body's own alerts,
    redacted, in the order `alerts` was read from them), claimed by their keys and read later (`Job.unread`,
    `read_unread`); and how many have no text, counted now by the test reading them makes (`has_text`), so
    the 202 says what it says when a group is read at once."""
    unread: dict[str, dict[str, Any]] = {}
    keys, ignored = [], 0
    for a, as_posted in zip(alerts, posted, strict=True):
        if a.status != "firing":
            continue
        if not has_text(a):
            ignored += 1
            continue
        key = alert_key(a, prefix)
        keys.append(key)
        unread.setdefault(key, as_posted)  # twice in one post: the first is the one claimed, as when read at once
    if not unread:
        return [], ignored
    return [Job(key=group_key_of(prefix, group, keys), items=[], unread=unread, group=name)], ignored


def read_unread(job: Job, item: Callable[[dict[str, Any]], Item | None]) -> Job:
    """The job with each unread alert read by `item` (as its webhook reads a small group's), in the order
    they came."""
    items = list(job.items)
    for as_posted in job.unread.values():
        if (read := item(as_posted)) is not None:
            items.append(read)
    return job.model_copy(update={"items": items, "unread": {}})


# A job key is stored with every claim and delivery of its alerts: a key as long as its group would make an
# alert storm's storage grow with the square of its size (1,000 alerts without a groupKey: 105 MB).
LONGEST_KEY = 200


def group_key(prefix: str, group: str | None, items: list[Item]) -> str:
    """`<prefix>:<groupKey>`, or for a post without one (some senders and proxies), a digest of its alerts'
    keys; a groupKey longer than LONGEST_KEY is kept as its start and a digest of the whole."""
    return group_key_of(prefix, group, [i.key for i in items])


def group_key_of(prefix: str, group: str | None, alert_keys: Iterable[str]) -> str:
    """`group_key`, given the alerts' keys."""
    if not group:
        digest = hashlib.sha256("\n".join(sorted(alert_keys)).encode()).hexdigest()[:24]
        return f"{prefix}:alerts-{digest}"
    if len(group) > LONGEST_KEY:
        digest = hashlib.sha256(group.encode()).hexdigest()[:24]
        return f"{prefix}:{group[: LONGEST_KEY // 2]}~{digest}"
    return f"{prefix}:{group}"


# The labels that tell one alert of a group from another (kubernetes-mixin rules share their summaries:
# "Pod is crash looping." twice says nothing), in the order they are read.
IDENTIFYING = (
    "namespace",
    "pod",
    "container",
    "deployment",
    "statefulset",
    "daemonset",
    "job_name",
    "node",
    "persistentvolumeclaim",
    "horizontalpodautoscaler",
    "instance",
    "job",
    "service",
    "cluster",
)


def heading(a: RuleAlert) -> str:
    """`KubePodCrashLooping · shop/checkout-6c9d7f-abcde · container checkout · cluster shop-prod`: the rule's
    name and the labels that identify this alert (exporters' names left out), else its headline."""
    labels = {k: v.strip() for k, v in a.labels.items() if isinstance(v, str) and v.strip()}
    name = labels.get("alertname") or next(iter(texts(a.annotations)), "")
    parts, used = [name] if name else [], set()
    if "namespace" in labels and "pod" in labels:
        parts.append(f"{labels['namespace']}/{labels['pod']}")
        used |= {"namespace", "pod"}
    for key in IDENTIFYING:
        value = labels.get(key)
        if key in used or not value or is_exporter(value):
            continue
        parts.append(f"{key} {value}")
    return " · ".join(parts)
