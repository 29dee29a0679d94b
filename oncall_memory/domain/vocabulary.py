"""Ops vocabulary: what operators mean by the same thing, said many ways.

A small table, reviewed by hand (not learnt): each symptom's patterns are the tellings seen in alerts,
kubectl output, kernel logs and post-mortems. An incident and an alert get the same canonical symptom
keys; they are stored in the payload (not in the four embedded lines, so the embedding stays the story)
and added to the sparse vector as terms of their own, so "exit code 137" finds "OOMKilled" by words too,
and ranking can say why: "both are OOM kills".
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Symptom(NamedTuple):
    key: str  # stored in the payload, and as the sparse term "symptom:<key>"
    plural: str  # for the reason: "both are <plural>"
    pattern: re.Pattern[str]


def _symptom(key: str, plural: str, *patterns: str) -> Symptom:
    return Symptom(key, plural, re.compile("|".join(f"(?:{p})" for p in patterns), re.I))


SYMPTOMS = (
    _symptom(
        "oom_kill",
        "OOM kills",
        r"\boom[\s-]?kill",
        r"\boomkilled\b",
        r"\bout of memory\b",
        r"\bexit(?:ed)?(?: with)?(?: code)?:?\s*137\b",
        r"\bkilled\b.{0,40}\bmemory\b",
        r"\bmemory (?:limit|allowance)\b.{0,30}\b(?:exceeded|killed|over)\b",
        r"\bover (?:its|the) memory (?:limit|allowance)\b",
        r"\bmemory cgroup out of memory\b",
        r"\bcontaineroomkilled\b",
    ),
    _symptom(
        "crash_loop",
        "crash loops",
        r"\bcrashloopbackoff\b",
        r"\bback-?off restarting failed container\b",
        r"\bcrash(?:ing)?[\s-]?loop",
        r"\brestart(?:s|ing|ed)? (?:in a loop|over and over|repeatedly)\b",
        # How often, said as people say it: "restarting constantly", "restarted too many times".
        r"\brestart(?:s|ing|ed)? (?:too (?:many times|often|frequently)|frequently|constantly|continuously|non-?stop)\b",
        r"\bkeeps? (?:crashing|restarting)\b",
        # What responders write for the same thing, without the event reason's word.
        r"\b(?:exit|crash|die|dying|fail)(?:e?s|ed|ing)?\b[^.\n]{0,40}\b(?:in a loop|on loop|in loop|over and over|repeatedly)\b",
        r"\bcontainers? (?:keeps?|kept) (?:exiting|dying|crashing|restarting)\b",
        r"\b(?:exit|crash|die)(?:s|ed|ing)?(?: with (?:exit )?code \d+)? (?:right )?(?:on|at|after) (?:start(?:up)?|boot)\b",
        r"\bwaiting state \(reason: \W?crashloopbackoff",
        r"\bkubepodcrashlooping\b",
        r"\brestarting \d+ times\b",
    ),
    _symptom(
        "not_ready",
        "pods that never become ready",
        r"\breadiness probe failed?\b",
        r"\bnever becomes? ready\b",
        r"\b0/\d+ ready\b",
        r"\bnon-ready state\b",
        r"\bkubepodnotready\b",
        r"\bpods? (?:are |is )?not ready\b",
        r"\brollout (?:is )?(?:stuck|not progressing)\b",
        r"\bkubedeploymentrolloutstuck\b",
        r"\bkubedeploymentreplicasmismatch\b",
        r"\breplicas mismatch\b",
    ),
    _symptom(
        "cert_expiry",
        "certificate expiries",
        r"\bx509: certificate has expired\b",
        r"\bcertificate (?:has )?expired\b",
        r"\bcert(?:ificate)? expir(?:y|ed|es|ing)\b",
        r"\bexpired (?:tls |ssl |x509 )?cert",
        r"\bcertmanagercertexpirysoon\b",
        r"\bsslcertificateexpir",
        r"\bcertificate (?:is )?(?:about to expire|not yet valid)\b",
        r"\bcertificateexpiration\b",
    ),
    _symptom(
        "dns",
        "DNS failures",
        r"\bi/o timeout\b.{0,40}:53\b",
        r":53\b.{0,40}\bi/o timeout\b",
        r"\bnxdomain\b",
        r"\bservfail\b",
        r"\bno such host\b",
        r"\bdns (?:resolution|lookups?|queries|query)\b",
        r"\bcoredns\b",
        r"\bname lookups?\b",
        r"\bcannot resolve\b",
        r"\bkubedns",
        r"\bresolv\.conf\b",
        # What the resolvers themselves print when a lookup fails: busybox's and bind's nslookup, dig, curl
        # and ssh, glibc's getaddrinfo (EAI_AGAIN, EAI_NONAME). Anchored to those tools' wording: a bare
        # "can't resolve" is as often webpack's missing module, "could not resolve" Maven's dependencies.
        r"\bnslookup: can'?t resolve\b",
        r"\bserver can'?t find\b",
        r"\bno servers could be reached\b",
        r"\bcould not resolve (?:host|hostname)\b",
        r"\btemporary failure in name resolution\b",
        r"\bname or service not known\b",
    ),
    _symptom(
        "conn_exhaustion",
        "connection exhaustion",
        r"\btoo many (?:clients|connections)\b",
        r"\bremaining connection slots are reserved\b",
        r"\bconnection pool (?:is )?(?:exhausted|saturated|full)\b",
        r"\bpool exhausted\b",
        r"\bmax_connections\b",
        r"\btimeout waiting for (?:a |an idle )?(?:db |database )?connection\b",
        r"\bexhausting \w+ connections\b",
        r"\bconnections? refused\b.{0,30}\b(?:postgres|mysql|db|database)\b",
    ),
    _symptom(
        "disk_pressure",
        "disk pressure",
        r"\bdiskpressure\b",
        r"\bdisk pressure\b",
        r"\bephemeral-storage\b",
        r"\bno space left on device\b",
        r"\bdisk (?:is )?full\b",
        r"\bout of disk\b",
        r"\bvolume \d+% full\b",
        r"\bfilling up\b",
        r"\bflood[\s-]stage\b",
        r"\bnodefilesystem(?:almost)?outofspace\b",
        r"\bfilesystem.{0,30}\bout of space\b",
        r"\bkubepersistentvolumefillingup\b",
        r"\bnodefilesystemspacefillingup\b",
    ),
    _symptom(
        "node_not_ready",
        "nodes going NotReady",
        r"\bnode(?:s)?\b.{0,20}\bnotready\b",
        r"\bnotready\b",
        r"\bpleg is not healthy\b",
        r"\bkubelet stopped posting node status\b",
        r"\bkubenodenotready\b",
        r"\bkubenodeunreachable\b",
        r"\bnode (?:has been )?unready\b",
        r"\bnode is unreachable\b",
        r"\bpod lifecycle event generator\b",
        r"\bkubeletplegdurationhigh\b",
        r"\bkubelet (?:is )?down\b",
    ),
    _symptom(
        "image_pull",
        "image pull failures",
        r"\berrimagepull\b",
        r"\bimagepullbackoff\b",
        r"\bpull access denied\b",
        r"\bmanifest unknown\b",
        r"\btoomanyrequests\b",
        r"\bfailed to pull image\b",
        r"\bimage tag not found\b",
    ),
    _symptom(
        "volume_mount",
        "volume mount failures",
        r"\bmulti-attach error\b",
        r"\bfailedmount\b",
        r"\bfailedattachvolume\b",
        r"\bunable to (?:attach or )?mount volumes?\b",
    ),
    _symptom(
        "cpu_throttling",
        "CPU throttling",
        r"\bcputhrottlinghigh\b",
        r"\bcpu throttl",
        r"\bthrottl(?:ed|ing) (?:of )?cpu\b",
        r"\bcfs throttl",
    ),
    _symptom(
        "quota",
        "exhausted quotas",
        r"\bexceeded (?:its |the )?(?:resource)?quota\b",
        r"\bresourcequota\b",
        r"\bquota (?:exceeded|reached|fully used)\b",
        r"\bkubequota(?:exceeded|fullyused)\b",
    ),
    _symptom(
        "consumer_lag",
        "consumer lag",
        r"\bconsumer (?:group )?lag\b",
        r"\bkafkaconsumer(?:group)?lag\b",
        r"\blag (?:is )?growing\b",
        r"\bqueue lag\b",
        r"\bbacklog\b.{0,30}\b(?:growing|behind)\b",
    ),
    _symptom(
        "vpn_down",
        "VPN tunnel failures",
        r"\bipsec\b",
        r"\bike(?:_sa_init|v2)?\b.{0,30}\b(?:timed out|timeout|fail)",
        r"\btunnel (?:is )?(?:down|flapping)\b",
        r"\bsite-to-site vpn\b",
    ),
)
BY_KEY = {s.key: s for s in SYMPTOMS}
TERM_PREFIX = "symptom:"


def symptoms(text: str) -> list[str]:
    """The canonical symptom keys `text` tells of, in table order."""
    return [s.key for s in SYMPTOMS if s.pattern.search(text)]


def terms(keys: list[str]) -> list[str]:
    """The sparse-vector terms for these symptoms."""
    return [TERM_PREFIX + k for k in keys]
