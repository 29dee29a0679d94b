"""Alertmanager's webhook (version 4) in: the payload as it really arrives, the alert in each of a group's
alerts with the facts its labels give, and the one job a group's firing alerts become.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from ...alert import Alert
from ...jobs import Item, Job
from ...label_facts import EXPORTERS, facts_from_labels
from ...links import web_link
from .. import Loose


class AMAlert(Loose):
    status: str
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    startsAt: str
    fingerprint: str


class AlertmanagerWebhook(Loose):
    version: str | None = None
    status: str | None = None
    groupKey: str | None = None
    groupLabels: dict[str, str] = {}
    alerts: list[AMAlert]


def alertmanager_alert(
    a: AMAlert, mapping: Mapping[str, list[str]] | None = None, known: Mapping[str, Iterable[str]] | None = None
) -> Alert | None:
    """The alert in one Alertmanager alert: alertname, summary and description, facts from its labels.
    None when it has no text at all. (Measured with `eval` and dropped: writing the rule's name as words,
    and removing the label values a description repeats; both lowered MRR on the pager set.)"""
    parts = [
        a.labels.get("alertname", "").strip(),
        a.annotations.get("summary", "").strip(),
        a.annotations.get("description", "").strip(),
    ]
    text = " - ".join(p for p in parts if p)
    return Alert(text=text, **facts_from_labels(a.labels, mapping, known)) if text else None


def alertmanager_jobs(
    hook: AlertmanagerWebhook,
    label_facts: Mapping[str, list[str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
) -> tuple[list[Job], int]:
    """The group as one job holding its firing alerts (one message per group and target), and how many
    firing alerts had no text to look up. Resolved alerts need no lookup."""
    items, ignored = [], 0
    for a in hook.alerts:
        if a.status != "firing":
            continue
        alert = alertmanager_alert(a, label_facts, known)
        if alert is None:
            ignored += 1
            continue
        items.append(
            Item(
                key=f"alertmanager:{a.fingerprint}:{a.startsAt}",
                alert=alert,
                title=alert_heading(a) or alert.text,
                detail=" — ".join(
                    dict.fromkeys(
                        t for t in (a.annotations.get(k, "").strip() for k in ("summary", "description")) if t
                    )
                )
                or None,
                runbook=web_link(a.annotations.get("runbook_url")),
            )
        )
    if not items:
        return [], ignored
    return [Job(key=job_key(hook.groupKey, items), items=items, group=hook.groupLabels.get("alertname"))], ignored


# A job key is stored with every claim and delivery of its alerts: a key as long as its group would make an
# alert storm's storage grow with the square of its size (1,000 alerts without a groupKey: 105 MB).
LONGEST_KEY = 200


def job_key(group_key: str | None, items: list[Item]) -> str:
    """`alertmanager:<groupKey>`, or for a post without one (some senders and proxies), a digest of its alerts'
    keys; a groupKey longer than LONGEST_KEY is kept as its start and a digest of the whole."""
    if not group_key:
        digest = hashlib.sha256("\n".join(sorted(i.key for i in items)).encode()).hexdigest()[:24]
        return f"alertmanager:alerts-{digest}"
    if len(group_key) > LONGEST_KEY:
        digest = hashlib.sha256(group_key.encode()).hexdigest()[:24]
        return f"alertmanager:{group_key[: LONGEST_KEY // 2]}~{digest}"
    return f"alertmanager:{group_key}"


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


def alert_heading(a: AMAlert) -> str:
    """`KubePodCrashLooping · shop/checkout-6c9d7f-abcde · container checkout · cluster shop-prod`: the rule's
    name and the labels that identify this alert (exporters' names left out), else the summary."""
    labels = {k: v.strip() for k, v in a.labels.items() if isinstance(v, str) and v.strip()}
    name = labels.get("alertname") or a.annotations.get("summary", "").strip()
    parts, used = [name] if name else [], set()
    if "namespace" in labels and "pod" in labels:
        parts.append(f"{labels['namespace']}/{labels['pod']}")
        used |= {"namespace", "pod"}
    for key in IDENTIFYING:
        value = labels.get(key)
        if key in used or not value or value.lower() in EXPORTERS:
            continue
        parts.append(f"{key} {value}")
    return " · ".join(parts)
