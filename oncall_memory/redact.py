"""Secrets never leave the building: find them in any text and replace them with `[REDACTED]`.

Three layers, each a list of named detectors (the README's Security section lists them):

- **detect-secrets** (Yelp's maintained detector set): the vendor shapes of its regex plugins (AWS,
  Azure storage, Slack tokens and webhooks, SendGrid, Twilio, Stripe, GitHub, GitLab, npm, PyPI,
  JWT, Discord, Telegram, Mailchimp, OpenAI, Artifactory, Square, IBM, Cloudant, SoftLayer, basic auth
  in URLs) and its Shannon entropy for the high-entropy check below.
- **context shapes** that a line-oriented code scanner does not see in on-call prose: whole private-key
  blocks, `password: <several words>`, `Authorization` headers, URL passwords holding `/` or `@`,
  connection-string parts (`AccountKey=`, `SharedAccessKey=`, SAS `sig=`), Kubernetes Secret `data:`
  values, `mysql -p...` and `--password`, and vendor prefixes detect-secrets lacks (Vault `hvs.`,
  Google `AIza`, `sk-proj-`/`sk-ant-`, `github_pat_`, `xapp-`, `dop_v1_`, `shpat_`, ...).
- **high entropy**: a bare 32-hex token (Datadog, New Relic and many API keys) or a long token of mixed
  characters whose entropy is that of random bytes.

A cheap pre-check (trigger words, long tokens) keeps clean text on a fast path.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

MARKER = "[REDACTED]"

Span = tuple[int, int]


@dataclass(frozen=True)
class Detector:
    name: str  # how the README lists it
    find: Callable[[str], Iterator[Span]]  # the spans of the secrets in a text
    # Lower-case words one of which every secret it finds contains (gitleaks' idea): the detector runs only
    # on text holding one, which keeps its cost off clean text. Empty: it always runs (a cheap literal scan).
    keywords: frozenset[str] = frozenset()


def _pattern(name: str, regex: str, group: int | str = 0, flags: int = 0, *, keywords: Iterable[str]) -> Detector:
    compiled = re.compile(regex, flags)

    def find(text: str) -> Iterator[Span]:
        for match in compiled.finditer(text):
            if match.group(group):
                yield match.span(group)

    return Detector(name, find, frozenset(keywords))


# -- context shapes -------------------------------------------------------------------------------

# The word in a key name that announces a secret ("password" in "db_password", "key" in "API-Key"), found
# first and cheaply; the rest of the key, the assignment and the value are read from there.
_SECRET_WORD = re.compile(r"passw(?:or)?d|passphrase|pwd|secret|credentials?|token|apikey|\bauth\b|"
                          r"(?:api|app|access|private|client|master|account|signing|encryption|license)[_-]?key", re.I)
_ASSIGNMENT = re.compile(r"[\w.-]*[\"']?[ \t]*(?P<op>:=|=>|=|:)(?P<space>[ \t]*)")
_QUOTED = re.compile(r"(?P<q>[\"'])(?P<s>[^\"'\n]{3,})(?P=q)")
_TO_EOL = re.compile(r"[^\s\"'][^\n;,]*")
_ONE_TOKEN = re.compile(r"[^\s\"',;}]{3,}")
SECRET_WORDS = ("passw", "pwd", "secret", "credential", "token", "key", "auth")


def _assigned_secrets(text: str) -> Iterator[Span]:
    """The value after a key naming a secret. Quoted: up to its quote. After "key: " (a colon and a space,
    YAML and prose): to the end of the line, since a passphrase is several words. Otherwise one token."""
    for word in _SECRET_WORD.finditer(text):
        assign = _ASSIGNMENT.match(text, word.end())
        if not assign:
            continue
        at = assign.end()
        if text.startswith(MARKER, at):
            continue
        if quoted := _QUOTED.match(text, at):
            yield quoted.span("s")
        elif value := (_TO_EOL if assign["op"] == ":" and assign["space"] else _ONE_TOKEN).match(text, at):
            yield value.span()

CONTEXT = [
    # Whole PEM blocks (also escaped "\n" inside JSON, and a block cut off before its END line).
    _pattern("private key block", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
             r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", flags=re.S, keywords=("private key",)),
    _pattern("PuTTY private key", r"PuTTY-User-Key-File-\d.*?(?:Private-MAC: \S+|\Z)", flags=re.S, keywords=("putty-user-key",)),
    # scheme://user:password@host: the password may hold "/" or "@"; the last "@" before a host wins.
    _pattern("password in a URL", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]*:(?P<s>\S+?)@(?=[^\s@/]+(?:[/:?#\s]|$))"
             r"(?!\S*@[^\s@/]+(?:[/:?#\s]|$))", "s", re.I, keywords=("@",)),
    # "Authorization: Bearer x", "Basic x", "Token token=x", "Api-Key x".
    _pattern("authorization header", r"\b(?:bearer|basic|token(?:\s+token=)?|api-key)\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})",
             "s", re.I, keywords=("bearer", "basic", "token", "api-key")),
    # Connection strings: Azure storage, Service Bus, SQL; a SAS token's signature.
    _pattern("connection-string key", r"\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecret)=(?P<s>[^;\s\"']+)",
             "s", re.I, keywords=("accountkey=", "sharedaccesskey=", "sharedaccesssignature=", "sharedsecret=")),
    _pattern("SAS signature", r"[?&]sig=(?P<s>[^&\s\"']+)", "s", re.I, keywords=("sig=",)),
    # Database clients: mysql -pSECRET, mysql --password=SECRET, redis-cli -a SECRET, --password SECRET.
    _pattern("mysql -p", r"\bmysql\w*\b[^\n]*?\s-p(?P<s>[^\s\"']+)", "s", keywords=("mysql",)),
    _pattern("--password flag", r"(?:\s|^)--?(?:password|passwd|pass|pw)(?:=|\s+)(?P<s>[^\s\"'-][^\s\"']*)", "s", re.I, keywords=("-pass", "-pw")),
    _pattern("redis-cli -a", r"\bredis-cli\b[^\n]*?\s-a\s+(?P<s>[^\s\"']+)", "s", keywords=("redis-cli",)),
    # Vendor prefixes detect-secrets does not know, or knows narrower than they are issued.
    _pattern("Vault token", r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}", keywords=("hvs.", "hvb.", "hvr.")),
    _pattern("Google API key", r"\bAIza[0-9A-Za-z_-]{35}", keywords=("aiza",)),
    _pattern("OpenAI / Anthropic key", r"\bsk-(?:proj-|ant-(?:api|admin)\d\d-|svcacct-|None-)?[A-Za-z0-9_-]{20,}", keywords=("sk-",)),
    _pattern("Stripe key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", keywords=("_live_", "_test_")),
    _pattern("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _pattern("GitLab token", r"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|oas)-[A-Za-z0-9_-]{20,}", keywords=("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "gloas-")),
    _pattern("Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}", keywords=("xox", "xapp-")),
    _pattern("Slack webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+", keywords=("hooks.slack.com",)),
    _pattern("npm token", r"\bnpm_[A-Za-z0-9]{36}", keywords=("npm_",)),
    _pattern("DigitalOcean token", r"\bdo[por]_v1_[a-f0-9]{64}", keywords=("_v1_",)),
    _pattern("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", keywords=("shpat_", "shpca_", "shppa_", "shpss_")),
    _pattern("Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", keywords=("atlasv1",)),
    _pattern("SendGrid key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", keywords=("sg.",)),
    _pattern("Twilio key", r"\bSK[0-9a-fA-F]{32}\b", keywords=("sk",)),
    _pattern("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", keywords=("eyj",)),
]

_K8S_DATA = re.compile(r"\b(?:data|stringData):")
_K8S_PAIR = re.compile(r"\s*[{,]?\s*[\"']?(?P<k>[\w.-]+)[\"']?\s*:\s*[\"']?(?P<v>[A-Za-z0-9+/]{4,}={0,2})[\"']?\s*}?")


def _kubernetes_secret_data(text: str) -> Iterator[Span]:
    """The base64 values after a Secret's `data:` (YAML lines or a flow map), while they look like base64."""
    for head in _K8S_DATA.finditer(text):
        pos = head.end()
        while match := _K8S_PAIR.match(text, pos):
            value = match.group("v")
            if not _is_base64(value):
                break
            yield match.span("v")
            pos = match.end()


def _is_base64(value: str) -> bool:
    if len(value) % 4 or value.isalpha() and value.islower():  # an English word is not an encoding
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


CONTEXT.append(Detector("secret keyword (password: / api_key= / \"token\": ...)", _assigned_secrets,
                        frozenset(SECRET_WORDS)))
CONTEXT.append(Detector("Kubernetes Secret data", _kubernetes_secret_data, frozenset({"data:"})))

# -- high entropy -----------------------------------------------------------------------------------

_HEX32 = re.compile(r"(?<![A-Za-z0-9_-])[0-9a-f]{32}(?![A-Za-z0-9_-])")
_DIGIT = re.compile(r"\d")
_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")  # maximal runs already: no boundary checks needed


def _high_entropy(text: str) -> Iterator[Span]:
    # `_entropy()` is asked for only once a candidate is found: most alert texts have none, and loading
    # detect-secrets costs a CLI lookup about 55 ms.
    for match in _HEX32.finditer(text):
        if _entropy()(match.group()) >= 3.0:  # detect-secrets' limit for hex strings
            yield match.span()
    for match in _TOKEN.finditer(text):
        token = match.group()
        # Random base64 of this length is mixed case with digits and has entropy above 4.5 (detect-secrets'
        # limit for base64); words joined by dashes (pod, image and host names) are neither.
        mixed = token != token.lower() and token != token.upper() and _DIGIT.search(token)
        if mixed and _entropy()(token) >= 4.5:
            yield match.span()


@cache
def _entropy() -> Callable[[str], float]:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    return Base64HighEntropyString().calculate_shannon_entropy


HIGH_ENTROPY = [Detector("high-entropy token", _high_entropy)]


# -- detect-secrets' vendor detectors ---------------------------------------------------------------

@cache
def vendor_detectors() -> list[Detector]:
    """detect-secrets' regex plugins, loaded on first use (the import costs about 0.15 s)."""
    from detect_secrets.plugins import (
        artifactory,
        aws,
        azure_storage_key,
        basic_auth,
        cloudant,
        discord,
        github_token,
        gitlab_token,
        ibm_cloud_iam,
        ibm_cos_hmac,
        jwt,
        mailchimp,
        npm,
        openai,
        private_key,
        pypi_token,
        sendgrid,
        slack,
        softlayer,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )

    plugins = [
        artifactory.ArtifactoryDetector, aws.AWSKeyDetector, azure_storage_key.AzureStorageKeyDetector,
        basic_auth.BasicAuthDetector, cloudant.CloudantDetector, discord.DiscordBotTokenDetector,
        github_token.GitHubTokenDetector, gitlab_token.GitLabTokenDetector, ibm_cloud_iam.IbmCloudIamDetector,
        ibm_cos_hmac.IbmCosHmacDetector, jwt.JwtTokenDetector, mailchimp.MailchimpDetector, npm.NpmDetector,
        openai.OpenAIDetector, private_key.PrivateKeyDetector, pypi_token.PypiTokenDetector,
        sendgrid.SendGridDetector, slack.SlackDetector, softlayer.SoftlayerDetector, square_oauth.SquareOAuthDetector,
        stripe.StripeDetector, telegram_token.TelegramBotTokenDetector, twilio.TwilioKeyDetector,
    ]
    detectors = []
    for plugin in plugins:
        for compiled in plugin().denylist:
            keywords = _VENDOR_KEYWORDS.get(plugin.__name__, ())
            detectors.append(Detector(f"detect-secrets: {plugin.secret_type}", _spans_of(compiled), frozenset(keywords)))
    return detectors


# What each detect-secrets plugin's secrets always contain, lower-cased (read off its patterns); a plugin
# not listed runs on every text that reaches the detectors.
_VENDOR_KEYWORDS = {
    "ArtifactoryDetector": ("akc", *(f"ap{c}" for c in "0123456789abcdef")),
    "AWSKeyDetector": ("akia", "asia", "abia", "acca", "a3t", "aws"),
    "AzureStorageKeyDetector": ("accountkey",),
    "BasicAuthDetector": ("@",),
    "CloudantDetector": ("cloudant",),
    "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLabTokenDetector": ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-", "glimt-", "glptt-",
                            "glagent-", "gloas-"),
    "IbmCloudIamDetector": ("ibm",),
    "IbmCosHmacDetector": ("secret",),
    "JwtTokenDetector": ("eyj",),
    "MailchimpDetector": ("-us",),
    "NpmDetector": ("_authtoken",),
    "OpenAIDetector": ("t3blbkfj",),
    "PrivateKeyDetector": ("private key", "putty"),
    "PypiTokenDetector": ("pypi-",),
    "SendGridDetector": ("sg.",),
    "SlackDetector": ("xox", "hooks.slack"),
    "SoftlayerDetector": ("softlayer", "sl"),
    "SquareOAuthDetector": ("sq0csp",),
    "StripeDetector": ("_live_",),
    "TelegramBotTokenDetector": (":aa",),
}


def _spans_of(compiled: re.Pattern[str]) -> Callable[[str], Iterator[Span]]:
    # detect-secrets reports a pattern's groups when it has them (the secret inside its context).
    def find(text: str) -> Iterator[Span]:
        for match in compiled.finditer(text):
            if compiled.groups:
                yield from (match.span(i) for i in range(1, compiled.groups + 1) if match.group(i))
            else:
                yield match.span()

    return find


OWN = [*CONTEXT, *HIGH_ENTROPY]
OWN_KEYWORDS = frozenset().union(*(d.keywords for d in OWN))
# The vendor detectors' keywords are known without loading them; the plugins without any look for long
# tokens. Text with neither never loads detect-secrets (0.15 s of a CLI start-up).
VENDOR_KEYWORDS = frozenset().union(*(frozenset(k) for k in _VENDOR_KEYWORDS.values()))
_VENDOR_TOKEN = re.compile(r"[A-Za-z0-9+/_.-]{20,}")


def detectors(text: str, low: str) -> tuple[list[Detector], set[str]]:
    """The detectors worth running on `text`, and the keywords it holds."""
    present = {k for k in OWN_KEYWORDS | VENDOR_KEYWORDS if k in low}
    if present & VENDOR_KEYWORDS or _VENDOR_TOKEN.search(text):
        return [*CONTEXT, *vendor_detectors(), *HIGH_ENTROPY], present
    return OWN, present


def secret_spans(text: str) -> list[tuple[Span, str]]:
    """Every secret found in `text`, as (span, detector name), in text order."""
    low = text.lower()
    every, present = detectors(text, low)
    found = [(span, d.name) for d in every if not d.keywords or not d.keywords.isdisjoint(present)
             for span in d.find(text)]
    return sorted(found, key=lambda f: f[0])


def might_hold_secret(text: str) -> bool:
    """Does any detector find a secret in `text`? (One pass over a record's joined strings decides whether
    its strings need redacting one by one.)"""
    return bool(secret_spans(text))


def redact(text: str, *, keyed: bool = False) -> str:
    """Return `text` with every secret found replaced by `[REDACTED]` (overlapping finds merged).

    `keyed`: replace each by `[REDACTED:<letters>]` instead, derived from a hash of what it replaced, for an
    identifier (a pager's random dedup key looks like a secret): equal keys stay equal, distinct ones
    distinct, and the key itself is gone.
    """
    merged: list[list[int]] = []
    for (start, end), _ in secret_spans(text):
        if merged and start <= merged[-1][1]:  # overlapping or touching finds are one secret
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    if not merged:
        return text
    out, last = [], 0
    for start, end in merged:
        out.append(text[last:start])
        out.append(_keyed_marker(text[start:end]) if keyed else MARKER)
        last = end
    out.append(text[last:])
    return "".join(out)


_AS_LETTERS = str.maketrans("0123456789", "ghijklmnop")


def _keyed_marker(secret: str) -> str:
    # Letters only: noise stripping removes long hex and numbers, and must not make two markers equal.
    return f"[REDACTED:{hashlib.sha256(secret.encode()).hexdigest()[:12].translate(_AS_LETTERS)}]"


def redact_all(value: Any) -> Any:
    """`value` with every string in it redacted, through lists and dicts (keys too), before anything
    else reads it. Clean data (the common case) is returned as it is after one pre-check."""
    return redact_each(value) if holds_secret(value) else value


def holds_secret(value: Any) -> bool:
    """Does any string in `value` (through lists and dicts) hold a secret? One detector pass over them all:
    the common case, a clean record, costs no more."""
    return might_hold_secret("\n".join(_strings(value)))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                yield k
            yield from _strings(v)


def redact_each(value: Any) -> Any:
    """Every string in `value` redacted, one by one."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_each(v) for v in value]
    if isinstance(value, dict):
        return {redact_each(k) if isinstance(k, str) else k: redact_each(v) for k, v in value.items()}
    return value
