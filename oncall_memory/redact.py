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
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

MARKER = "[REDACTED]"

Span = tuple[int, int]


@dataclass(frozen=True)
class Detector:
    name: str  # how the README lists it
    find: Callable[[str], Iterator[Span]]  # the spans of the secrets in a text


def _pattern(name: str, regex: str, group: int | str = 0, flags: int = 0) -> Detector:
    compiled = re.compile(regex, flags)

    def find(text: str) -> Iterator[Span]:
        for match in compiled.finditer(text):
            if match.group(group):
                yield match.span(group)

    return Detector(name, find)


# -- context shapes -------------------------------------------------------------------------------

# Key names that announce a secret: "password", "db_passwd", "API-Key", "client_secret", "token", ...
_SECRET_KEY = (r"(?:[\w.-]*(?:passw(?:or)?d|passphrase|pwd|secret|credentials?|token|"
               r"(?:api|app|access|private|client|master|account|signing|encryption|license)[_-]?key|apikey)[\w.-]*"
               r"|auth)")
_STOP = r"[\s,;}\]\"'`]"

CONTEXT = [
    # Whole PEM blocks (also escaped "\n" inside JSON, and a block cut off before its END line).
    _pattern("private key block", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
             r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", flags=re.S),
    _pattern("PuTTY private key", r"PuTTY-User-Key-File-\d.*?(?:Private-MAC: \S+|\Z)", flags=re.S),
    # scheme://user:password@host: the password may hold "/" or "@"; the last "@" before a host wins.
    _pattern("password in a URL", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]*:(?P<s>\S+?)@(?=[^\s@/]+(?:[/:?#\s]|$))"
             r"(?!\S*@[^\s@/]+(?:[/:?#\s]|$))", "s", re.I),
    # "Authorization: Bearer x", "Basic x", "Token token=x", "Api-Key x".
    _pattern("authorization header", r"\b(?:bearer|basic|token(?:\s+token=)?|api-key)\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})",
             "s", re.I),
    # key: value / key=value / "key": "value" where the key names a secret. A quoted value ends at its
    # quote; after "key: " the value runs to the end of the line (a passphrase is several words);
    # after "key=" it is one token.
    _pattern("secret keyword, quoted", rf"\b{_SECRET_KEY}[\"']?\s*(?:[:=]|=>|:=)\s*(?P<q>[\"'])(?P<s>[^\"'\n]{{3,}})(?P=q)",
             "s", re.I),
    _pattern("secret keyword, to end of line", rf"\b{_SECRET_KEY}[\"']?:[ \t]+(?!\[REDACTED\])(?P<s>[^\s\"'][^\n;,]*)",
             "s", re.I),
    _pattern("secret keyword, one token", rf"\b{_SECRET_KEY}[\"']?\s*(?:=|=>|:=)\s*(?!\[REDACTED\])(?P<s>[^\s\"',;}}]{{3,}})",
             "s", re.I),
    # Connection strings: Azure storage, Service Bus, SQL; a SAS token's signature.
    _pattern("connection-string key", r"\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecret)=(?P<s>[^;\s\"']+)",
             "s", re.I),
    _pattern("SAS signature", r"[?&]sig=(?P<s>[^&\s\"']+)", "s", re.I),
    # Database clients: mysql -pSECRET, mysql --password=SECRET, redis-cli -a SECRET, --password SECRET.
    _pattern("mysql -p", r"\bmysql\w*\b[^\n]*?\s-p(?P<s>[^\s\"']+)", "s"),
    _pattern("--password flag", r"(?:\s|^)--?(?:password|passwd|pass|pw)(?:=|\s+)(?P<s>[^\s\"'-][^\s\"']*)", "s", re.I),
    _pattern("redis-cli -a", r"\bredis-cli\b[^\n]*?\s-a\s+(?P<s>[^\s\"']+)", "s"),
    # Vendor prefixes detect-secrets does not know, or knows narrower than they are issued.
    _pattern("Vault token", r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}"),
    _pattern("Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
    _pattern("OpenAI / Anthropic key", r"\bsk-(?:proj-|ant-(?:api|admin)\d\d-|svcacct-|None-)?[A-Za-z0-9_-]{20,}"),
    _pattern("Stripe key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _pattern("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    _pattern("GitLab token", r"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|oas)-[A-Za-z0-9_-]{20,}"),
    _pattern("Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"),
    _pattern("Slack webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+"),
    _pattern("npm token", r"\bnpm_[A-Za-z0-9]{36}"),
    _pattern("DigitalOcean token", r"\bdo[por]_v1_[a-f0-9]{64}"),
    _pattern("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _pattern("Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),
    _pattern("SendGrid key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    _pattern("Twilio key", r"\bSK[0-9a-fA-F]{32}\b"),
    _pattern("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
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


CONTEXT.append(Detector("Kubernetes Secret data", _kubernetes_secret_data))

# -- high entropy -----------------------------------------------------------------------------------

_HEX32 = re.compile(r"(?<![A-Za-z0-9_-])[0-9a-f]{32}(?![A-Za-z0-9_-])")
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")


def _high_entropy(text: str) -> Iterator[Span]:
    entropy = _entropy()
    for match in _HEX32.finditer(text):
        if entropy(match.group()) >= 3.0:  # detect-secrets' limit for hex strings
            yield match.span()
    for match in _TOKEN.finditer(text):
        token = match.group()
        mixed = sum((any(c.islower() for c in token), any(c.isupper() for c in token), any(c.isdigit() for c in token)))
        # Random base64 of this length has entropy above 4.5 (detect-secrets' limit for base64); words
        # joined by dashes (pod, image and host names) stay below it and are rarely mixed case.
        if mixed == 3 and entropy(token) >= 4.5:
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
            detectors.append(Detector(f"detect-secrets: {plugin.secret_type}", _spans_of(compiled)))
    return detectors


def _spans_of(compiled: re.Pattern[str]) -> Callable[[str], Iterator[Span]]:
    # detect-secrets reports a pattern's groups when it has them (the secret inside its context).
    def find(text: str) -> Iterator[Span]:
        for match in compiled.finditer(text):
            if compiled.groups:
                yield from (match.span(i) for i in range(1, compiled.groups + 1) if match.group(i))
            else:
                yield match.span()

    return find


def detectors() -> list[Detector]:
    return [*CONTEXT, *vendor_detectors(), *HIGH_ENTROPY]


# -- the cheap pre-check ----------------------------------------------------------------------------

# Every context and vendor shape holds one of these (lower-cased), or a long token the entropy and
# vendor checks look at. Substring tests are far cheaper than running every detector.
_TRIGGER = re.compile(
    r"passw|pwd|secret|credential|token|key|auth|bearer|basic|private|://|sig=|mysql|redis-cli|data:|hv[sbr]\.|aiza"
    r"|[sprk]k[-_]|gh[pousr]_|github_pat|gl[a-z]{1,6}-|xox|xapp-|npm_|do[por]_v1|shp|atlasv1|sg\.|eyj|akia|asia"
    r"|a3t|abia|acca|putty|pypi-"
    r"|[A-Za-z0-9+/=_.-]{24,}|[0-9a-f]{32}",
    re.I,
)


def might_hold_secret(text: str) -> bool:
    """False when `text` certainly holds no secret any detector finds (a cheap pre-check)."""
    return _TRIGGER.search(text) is not None


def secret_spans(text: str) -> list[tuple[Span, str]]:
    """Every secret found in `text`, as (span, detector name), in text order."""
    if not might_hold_secret(text):
        return []
    return sorted(((span, d.name) for d in detectors() for span in d.find(text)), key=lambda f: f[0])


def redact(text: str) -> str:
    """Return `text` with every secret found replaced by `[REDACTED]` (overlapping finds merged)."""
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
        out.append(MARKER)
        last = end
    out.append(text[last:])
    return "".join(out)


def redact_all(value: Any) -> Any:
    """`value` with every string in it redacted, through lists and dicts (keys too), before anything
    else reads it. Clean data (the common case) is returned as it is after one pre-check."""
    if not might_hold_secret("\n".join(_strings(value))):
        return value
    return _redact_each(value)


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


def _redact_each(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redact_each(v) for v in value]
    if isinstance(value, dict):
        return {_redact_each(k) if isinstance(k, str) else k: _redact_each(v) for k, v in value.items()}
    return value
