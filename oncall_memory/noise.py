"""Strip what makes two tellings of the same problem look different: hashes, addresses, times, node names.

The embedding should carry the story, not the ceremony around it.
"""

from __future__ import annotations

import re

_NODE_NAMES = [
    re.compile(r"\baks-[a-z0-9]+-\d{6,}-vmss[0-9a-z]{6}\b", re.I),  # AKS
    re.compile(r"\bip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}(?:\.[a-z0-9-]+)*\.(?:compute\.)?internal\b", re.I),  # EKS/EC2
    re.compile(r"\bgke-[a-z0-9-]+-[0-9a-f]{8}-[a-z0-9]{4}\b", re.I),  # GKE
]
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{1,2}\s+\d{2}:\d{2}:\d{2}\b"
    r"|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z)?\b"
)
_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2})?(?::\d{1,5})?\b")
_IPV6 = re.compile(r"(?<![\w:])(?=[0-9a-f:]*[0-9a-f]{2})(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?![\w:])", re.I)
# Deployment pods: <name>-<replicaset hash>-<5 chars>; the replicaset hash is 5-10 chars of [a-z0-9].
_DEPLOYMENT_POD = re.compile(r"\b([a-z][a-z0-9-]*?)-[a-z0-9]{5,10}-[a-z0-9]{5}\b")
# DaemonSet / Job pods: <name>-<5 chars with a digit>; the digit keeps words like "nginx-proxy" intact.
_SHORT_POD = re.compile(r"\b([a-z][a-z0-9-]*?)-(?=[a-z]*\d)[a-z0-9]{5}\b")
_LONG_HEX = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b", re.I)
_SPACES = re.compile(r"[ \t]{2,}")
_DANGLING = re.compile(r"[ \t]+([,.;:)\]])(?=\s|$)")


def _pod_base(match: re.Match[str]) -> str:
    # Only collapse when the suffix looks generated (has a digit), so "cert-manager-webhook" survives.
    whole = match.group(0)
    suffix = whole[len(match.group(1)) :]
    return match.group(1) if any(c.isdigit() for c in suffix) else whole


_MAY_HOLD_NOISE = re.compile(r"[\d:]")  # every noise shape has a digit or (IPv6) a colon


def strip_noise(text: str) -> str:
    """Return `text` without pod hashes, IPs, UUIDs, long hex ids, timestamps and node names."""
    if not _MAY_HOLD_NOISE.search(text):
        return _SPACES.sub(" ", text).strip()
    for pattern in _NODE_NAMES:
        text = pattern.sub("", text)
    text = _UUID.sub("", text)
    text = _TIMESTAMP.sub("", text)
    text = _IPV4.sub("", text)
    text = _IPV6.sub("", text)
    text = _DEPLOYMENT_POD.sub(_pod_base, text)
    text = _SHORT_POD.sub(_pod_base, text)
    text = _LONG_HEX.sub("", text)
    text = _DANGLING.sub(r"\1", text)
    return _SPACES.sub(" ", text).strip()


# -- pager ceremony ----------------------------------------------------------------------------------
# What pagers wrap around an alert: Alertmanager's subject "[FIRING:2] Name (label values ...)" (also the
# title its PagerDuty receiver gives an incident) and the Labels/Annotations/Source blocks of its default
# templates. Not signal: two tellings of one problem differ in exactly these.
_SUBJECT = re.compile(
    r"^\s*\[(?:FIRING(?::\d+)?|RESOLVED)\]\s*(?P<names>[^()\n]*?)\s*(?:\([^()\n]*\))?\s*$", re.I | re.M
)
_TEMPLATE_LINES = re.compile(
    r"^\s*(?:(?:Labels|Annotations|Details|Alerts (?:Firing|Resolved)):\s*$|-\s*[\w.]+\s*=\s.*$|"
    r"(?:Source|runbook_url|dashboard|GeneratorURL):\s*\S+\s*$|For more information,? see .*$)",
    re.I | re.M,
)


def strip_ceremony(text: str) -> str:
    """`text` without pager ceremony: Alertmanager's subject prefix and label list, its template lines."""
    if "[" not in text and ":" not in text:
        return text
    text = _SUBJECT.sub(lambda m: m["names"], text)
    text = _TEMPLATE_LINES.sub("", text)
    return re.sub(r"\n{2,}", "\n", text).strip()
