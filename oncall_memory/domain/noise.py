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
_NODE_PREFIXES = ("aks-", "ip-", "gke-")  # what each of _NODE_NAMES needs (case folded)
# Host names say where, not what: their domain carries the organisation's name and environment codes
# (`patroni-01-db-gprd.c.acme-production.internal`), which made unrelated pages share "words" with an alert.
# A host is kept as its role: its first label, up to its number (`patroni`); a port goes with it.
_INTERNAL_SUFFIX = r"(?:internal|local|lan|corp|intra|intranet|localdomain|home\.arpa)"
_FQDN = re.compile(
    rf"\b([a-z][a-z0-9-]*)((?:\.[a-z0-9-]+)*\.{_INTERNAL_SUFFIX}|(?:\.[a-z0-9-]+){{2,}})(?::\d{{1,5}})?\b", re.I
)
# A numbered host: a role, a zero-padded number, then what the organisation appends (site, env). A bare
# number is not enough outside a domain (`http-503-errors`, `postgres-12`).
# Host names are written in lower case: `HTTP-01` (an ACME challenge) is not a host.
_NUMBERED_HOST = re.compile(r"\b([a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*)-0\d{1,2}(?:-[a-z][a-z0-9]*)*\b")
_NUMBERED_LABEL = re.compile(r"([a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*)-\d{1,3}(?:-[a-z][a-z0-9]*)*")
# Kubernetes' own service names (`redis.cache.svc.cluster.local`) are the platform's, not an organisation's:
# "svc cluster local" tells of in-cluster DNS, and stays.
_CLUSTER_DNS = re.compile(r"\.svc(?:\.cluster\.local)?$", re.I)
_INSTANCE_ID = re.compile(r"\bi-(?=[0-9a-f]*\d)[0-9a-f]{8,17}\b")  # an EC2 instance: an id, nothing more


def _host_role(match: re.Match[str]) -> str:
    """A host name's role, where the name is a host's: an internal domain, or a numbered first label. A
    public name (`api.stripe.com`, `docs.ceph.com`) is kept: its words say which service."""
    first, domain = match.group(1), match.group(2)
    if _CLUSTER_DNS.search(domain):
        return match.group(0)
    internal = re.search(rf"\.{_INTERNAL_SUFFIX}$", domain, re.I) is not None
    numbered = _NUMBERED_LABEL.fullmatch(first)
    if not internal and not numbered:
        return match.group(0)
    return numbered.group(1) if numbered else first


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
# Only from a run's first space (the leftmost match starts there anyway): tried inside a run, each start read
# the rest of it, and a field of 65,536 spaces took 26 s.
_DANGLING = re.compile(r"(?<![ \t])[ \t]+([,.;:)\]])(?=\s|$)")


_DIGIT = re.compile(r"\d")


def _pod_base(match: re.Match[str]) -> str:
    # Only collapse when the suffix looks generated (has a digit), so "cert-manager-webhook" survives.
    whole = match.group(0)
    suffix = whole[len(match.group(1)) :]
    return match.group(1) if _DIGIT.search(suffix) else whole


# Every noise shape has a digit, a colon (IPv6) or an internal domain.
_MAY_HOLD_NOISE = re.compile(rf"[\d:]|\.{_INTERNAL_SUFFIX}\b", re.I)


# Names (hosts, pods, ids) are read one token at a time: a token longer than any name can be is no name.
# Their patterns backtrack within what they are given, so a stranger's 40,000-character "a-a-a-..." cost
# minutes when they were run over the whole text; over tokens of at most `LONGEST_NAME` it is linear.
LONGEST_NAME = 253  # a DNS name's longest, and a Kubernetes object's
_TOKEN = re.compile(r"[^\s]+")
_SPACE = re.compile(r"\s")
_TOKEN_MAY_HOLD = re.compile(rf"\d|\.{_INTERNAL_SUFFIX}\b", re.I)


# Each pattern below is tried only where the text holds what any match of it must (a node name's prefix, a
# UUID's four dashes, an IPv4's three dots): a pod's name or a label value is read in a few microseconds,
# not seventeen, and a storm's ten thousand alerts each carry several. The checks are necessary conditions
# of a match, so the text that comes out is the same.


def _names(match: re.Match[str]) -> str:
    return _name(match.group(0))


def _name(token: str) -> str:
    if len(token) > LONGEST_NAME or not _TOKEN_MAY_HOLD.search(token):
        return token
    if "." in token:
        token = _FQDN.sub(_host_role, token)
    if "-0" in token:
        token = _NUMBERED_HOST.sub(lambda m: m.group(1), token)
    if "i-" in token:
        token = _INSTANCE_ID.sub("", token)
    dashes = token.count("-")
    if dashes >= 2:
        token = _DEPLOYMENT_POD.sub(_pod_base, token)
    if dashes:
        token = _SHORT_POD.sub(_pod_base, token)
    return _LONG_HEX.sub("", token) if len(token) >= 12 else token


def strip_noise(text: str) -> str:
    """Return `text` without pod hashes, IPs, UUIDs, long hex ids, timestamps and node names, and with each
    host name cut to its role."""
    if not _MAY_HOLD_NOISE.search(text):
        return _spaces(text)
    folded = text.casefold()  # as re.I compares ("ſ" is an s to it, and to casefold, not to lower)
    for prefix, pattern in zip(_NODE_PREFIXES, _NODE_NAMES):
        if prefix in folded:
            text = pattern.sub("", text)
    dashes, colons = text.count("-"), text.count(":")
    if dashes >= 4:
        text = _UUID.sub("", text)
    if dashes >= 2 or colons >= 2:
        text = _TIMESTAMP.sub("", text)
    if text.count(".") >= 3:
        text = _IPV4.sub("", text)
    if colons >= 2:
        text = _IPV6.sub("", text)
    # One token (a pod's name, a label's value) is read as is: through `sub` each costs a callback from C.
    text = _TOKEN.sub(_names, text) if _SPACE.search(text) else _name(text)
    if " " in text or "\t" in text:
        text = _DANGLING.sub(r"\1", text)
    return _spaces(text)


def _spaces(text: str) -> str:
    return _SPACES.sub(" ", text).strip() if "  " in text or "\t" in text else text.strip()


# -- pager ceremony ----------------------------------------------------------------------------------
# What pagers wrap around an alert: Alertmanager's subject "[FIRING:2] Name (label values ...)" (also the
# title its PagerDuty receiver gives an incident) and the Labels/Annotations/Source blocks of its default
# templates. Not signal: two tellings of one problem differ in exactly these.
# A subject line is read with string operations, not one pattern: a name before optional spaces, optional
# label values in parentheses and optional spaces split a line of spaces every way (16,384 blank lines took
# 16 s, a subject of 4,096 spaces more than a minute). The template lines' pattern stays on its line ([ \t],
# never \s, which takes line breaks: tried at each line's start, it ran on over all the blank lines below).
_SUBJECT_PREFIX = re.compile(r"\s*\[(?:FIRING(?::\d+)?|RESOLVED)\]", re.I)
_TEMPLATE_LINES = re.compile(
    r"^[ \t]*(?:(?:Labels|Annotations|Details|Alerts (?:Firing|Resolved)):[ \t]*$|-[ \t]*[\w.]+[ \t]*=[ \t].*$|"
    r"(?:Source|runbook_url|dashboard|GeneratorURL):[ \t]*\S+[ \t]*$|For more information,? see .*$)",
    re.I | re.M,
)


def subject(line: str) -> tuple[str, str | None] | None:
    """An Alertmanager subject, `[FIRING:2] Name (label values ...)`: its names and its label values (None
    when it lists none), or None when `line` is not one. Linear in the line."""
    prefix = _SUBJECT_PREFIX.match(line)
    if prefix is None:
        return None
    rest = line[prefix.end() :].strip()
    if rest.endswith(")") and rest.count("(") == 1 and rest.count(")") == 1:
        names, _, values = rest[:-1].partition("(")
        return names.rstrip(), values
    return None if "(" in rest or ")" in rest else (rest, None)


# Datadog titles a monitor's notification "[P2] [Triggered on {service:checkout,env:prod}] Monitor name": the
# priority when one is set, the transition, and (with `include_tags`, the monitor's default) the triggering
# group's tags; "[Triggered] Monitor name" without them. It is the event's title (`$EVENT_TITLE`), so the title
# of a PagerDuty incident Datadog opens, and of whatever a team's webhook fills from it (an Opsgenie alert's
# message). The transitions are Datadog's `alert_transition` values.
_TRANSITIONS = frozenset(
    {"triggered", "re-triggered", "recovered", "warn", "re-warn", "no data", "re-no data", "renotify"}
)


def monitor_title(line: str) -> tuple[str, str | None] | None:
    """A Datadog monitor's notification title, `[P2] [Triggered on {tags}] Name`: its name and its tags as
    written (`service:checkout,env:prod`; None when it lists none), or None when `line` is not one. Linear
    in the line: string operations only."""
    rest = line.strip()
    if len(rest) > 4 and rest[0] == "[" and rest[1] in "Pp" and rest[2] in "12345" and rest[3] == "]":
        rest = rest[4:].lstrip()  # the monitor's priority
    if not rest.startswith("["):
        return None
    end = rest.find("]")
    if end < 0:
        return None
    transition, on, tags = rest[1:end].partition(" on {")
    if on:  # the tags end at "}]": a tag's value may hold "]" (a facet's query), never "}]"
        end = rest.find("}]", 1 + len(transition) + len(on))
        if end < 0:
            return None
        tags, end = rest[1 + len(transition) + len(on) : end], end + 1
    if transition.strip().casefold() not in _TRANSITIONS:
        return None
    return rest[end + 1 :].strip(), (tags if on else None)


# CloudWatch names an alarm's notification (the SNS subject, so the e-mail's, so the title of an incident a
# pager's e-mail integration opens) `ALARM: "checkout-5xx-rate" in US East (N. Virginia)`: the new state,
# the alarm's name in quotes and the region's name.
_ALARM_STATES = ('ALARM: "', 'OK: "', 'INSUFFICIENT_DATA: "')


def alarm_subject(line: str) -> str | None:
    """The alarm's name in a CloudWatch alarm's subject, `ALARM: "name" in Region`, or None when `line` is not
    one. Linear in the line."""
    rest = line.strip()
    state = next((s for s in _ALARM_STATES if rest.startswith(s)), None)
    if state is None:
        return None
    end = rest.rfind('" in ')
    return (rest[len(state) : end].strip() or None) if end >= len(state) else None


# A link in a pager's text (Grafana's silence and dashboard links, a runbook's address) names where to click,
# not the problem: its path's words ("alerting silence new", "orgid") were read as the alert's (issue 84).
_LINK = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`]+")


def strip_links(text: str) -> str:
    """`text` without its links."""
    return _LINK.sub(" ", text) if "://" in text else text


def strip_ceremony(text: str) -> str:
    """`text` without pager ceremony: Alertmanager's subject prefix and label list, its template lines,
    Datadog's priority, transition and tags before a monitor's name, and CloudWatch's state and region
    around an alarm's name."""
    if "[" not in text and ":" not in text:
        return text
    if "[" in text or '"' in text:
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if "[" in line and (read := subject(line) or monitor_title(line)) is not None:
                lines[i] = read[0]
            elif '"' in line and (name := alarm_subject(line)) is not None:
                lines[i] = name
        text = "\n".join(lines)
    text = _TEMPLATE_LINES.sub("", text)
    return re.sub(r"\n{2,}", "\n", text).strip()
