"""Secrets in the forms tools print them and responders retell them (issue 81): a kubeadm bootstrap token in
`kubeadm token list`, SNMPv3's passphrases, an app password in the four groups of four its vendor shows, the headers of an OTLP
exporter, a `user / pass` pair, and `pw` followed by the password with no `=` or "is".

Each rule is RE2 (linear) and replaces the value only.
"""

from __future__ import annotations

from collections.abc import Iterator

from .base import Detector, Groups, Span, compile_re2, pattern

# kubeadm's bootstrap token: `[a-z0-9]{6}.[a-z0-9]{16}` (its id, then its secret), in `token list`'s table
# (whose rows do not repeat the word), `kubeadm join --token`, a bootstrap-token Secret. Standing alone, not
# inside a longer name, its secret half mixing letters and digits, in a text that speaks of kubeadm or tokens.
_KUBEADM = compile_re2(r"(?:^|[^\w.-])(?P<s>[a-z0-9]{6}\.(?P<half>[a-z0-9]{16}))(?:[^\w.-]|$)")
_KUBEADM_G = Groups(_KUBEADM)


def _kubeadm_tokens(text: str) -> Iterator[Span]:
    for m in _KUBEADM.finditer(text):
        half = m.group(_KUBEADM_G.half)
        if any(c.isdigit() for c in half) and any(c.isalpha() for c in half):
            yield m.span(_KUBEADM_G.s)


KUBEADM = Detector("kubeadm bootstrap token", _kubeadm_tokens, frozenset({"kubeadm", "token", "bootstrap"}))

# An app password as Google and Apple show it: four groups of four lower-case letters (`abcd efgh ijkl
# mnop`, or with dashes), after the words that name it.
APP_PASSWORD = pattern(
    "app password in four groups",
    r"(?i)\b(?:app(?:lication)?[ -]?(?:specific[ -])?passw(?:or)?d)s?\b[^\n]{0,40}?"
    r"\b(?P<s>[a-z]{4}([ -])[a-z]{4}[ -][a-z]{4}[ -][a-z]{4})\b",
    group="s",
    keywords=("app password", "app-password", "app-specific", "application password", "app specific"),
)

# OTEL_EXPORTER_OTLP_HEADERS (and `otlp_headers`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS`): a comma list of
# `name=value`, each value a vendor's key or a basic credential (`x-honeycomb-team=…`, `dd-api-key=…`,
# `Authorization=Basic%20…`).
_OTLP = compile_re2(r"(?i)otlp[\w.-]*headers?[\"']?[ \t]*[:=][ \t]*[\"']?(?P<list>[^\s\"']+)")
_OTLP_LIST = Groups(_OTLP).list
_OTLP_PAIR = compile_re2(r"(?:^|,)[^=,]+=(?P<s>[^,]{8,})")
_OTLP_VALUE = Groups(_OTLP_PAIR).s


def _otlp_values(text: str) -> Iterator[Span]:
    for m in _OTLP.finditer(text):
        base = m.start(_OTLP_LIST)
        for pair in _OTLP_PAIR.finditer(m.group(_OTLP_LIST)):
            value = pair.group(_OTLP_VALUE)
            if not value.startswith(("$", "{{", "<")):
                start, end = pair.span(_OTLP_VALUE)
                yield base + start, base + end


OTLP_HEADERS = Detector("OTLP exporter headers", _otlp_values, frozenset({"otlp"}))

# "user / pass: deploy / Xk9fQ2mLp7", "username/password admin/Adm1n!234": after a label that pairs the two, the
# second of the pair.
USER_PASS_PAIR = pattern(
    "user / pass pair",
    r"(?i)\b(?:user(?:name)?|login)[ \t]*/[ \t]*pass(?:word|wd)?\b[ \t]*[:=]?[ \t]*"
    r"[^\s/]{1,64}[ \t]*/[ \t]*(?P<s>[^\s/]{4,})",
    group="s",
    keywords=("/pass", "/ pass", "/password"),
)

# "root pw Tr0ub4dor&3 on the bastion": `pw` and then the value, no `=`, `:` or "is" (which the prose rule
# reads). Only a value that cannot be a word: six characters or more holding a digit or a symbol, not a path.
_PW = compile_re2(r"(?i)\bpw[ \t]+(?P<s>[^\s\"'`,;]{6,64})")
_PW_VALUE = Groups(_PW).s


def _pw_values(text: str) -> Iterator[Span]:
    for m in _PW.finditer(text):
        value = m.group(_PW_VALUE).rstrip(".!?):")
        if value.startswith(("/", "~", "$", "{{", "<", "[", "=", ":")) or len(value) < 6:
            continue
        if any(not c.isalpha() for c in value) and any(c.isalpha() for c in value):
            start = m.start(_PW_VALUE)
            yield start, start + len(value)


PW_BARE = Detector("pw and its value", _pw_values, frozenset({"pw"}))

# SNMPv3's passphrases: every `-A` (authentication) and `-X` (privacy) on a line that runs an SNMP tool.
_SNMP_LINE = compile_re2(r"\bsnmp(?:walk|get|getnext|bulkwalk|bulkget|set|table|trap|check|cmd|status|delta)\b[^\n]*")
_SNMP_V3 = compile_re2(r"\s-[AX][ \t]*[\"']?(?P<s>[^\s\"']+)")
_SNMP_VALUE = Groups(_SNMP_V3).s


def _snmp_passphrases(text: str) -> Iterator[Span]:
    for line in _SNMP_LINE.finditer(text):
        for m in _SNMP_V3.finditer(line.group()):
            start, end = m.span(_SNMP_VALUE)
            if not m.group(_SNMP_VALUE).startswith(("$", "{{", "<")):
                yield line.start() + start, line.start() + end


SNMP_V3 = Detector("SNMPv3 passphrases", _snmp_passphrases, frozenset({"snmp"}))

TOOL_OUTPUT: list[Detector] = [KUBEADM, APP_PASSWORD, OTLP_HEADERS, USER_PASS_PAIR, PW_BARE, SNMP_V3]
