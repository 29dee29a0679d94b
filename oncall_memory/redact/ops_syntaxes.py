"""Secrets in the syntaxes ops people paste from their own tools: SQL that sets a password, config files whose
key says secret, the password flags of everyday CLIs (a table, one entry per tool), cookies, hook URLs with
their token in the path, pager routing keys, wallet keys and seed phrases, and passwords told in prose in
more than English.

Each rule replaces the value only and is linear in the text (RE2, or one pass of its own).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from importlib import resources

import re2

from .base import Detector, Groups, Span, compile_re2, pattern

# -- SQL -----------------------------------------------------------------------------------------------------

SQL = [
    # MySQL / MariaDB: CREATE USER ... IDENTIFIED BY 'x', ALTER USER ... IDENTIFIED WITH plugin BY 'x'.
    pattern(
        "SQL IDENTIFIED BY",
        r"(?i)\bidentified\s+(?:with\s+[\w'\"`]+\s+)?by\s+(?:password\s+)?['\"](?P<s>[^'\"\n]{1,200})['\"]",
        group="s",
        keywords=("identified",),
    ),
    # PostgreSQL: CREATE/ALTER ROLE|USER ... [ENCRYPTED] PASSWORD 'x'; SET PASSWORD = 'x'.
    pattern(
        "SQL PASSWORD 'x'",
        r"(?i)\b(?:encrypted\s+|unencrypted\s+)?password\s*(?:=\s*)?(?:password\s*\(\s*)?'(?P<s>[^'\n]{1,200})'",
        group="s",
        keywords=("password",),
    ),
]

# -- config files -------------------------------------------------------------------------------------------

# A config line whose key names a secret (`ldap_default_authtok = x`, `requirepass x`, `bindpw x`,
# `rootpw --plaintext x`, `snmp-server community x RO`, `masterauth x`); INI, space-separated and YAML forms.
_CONF_KEY = (
    r"[\w.-]*(?:authtok|psk|preshared[_-]?key|bindpw|requirepass|masterauth|masterpass|rootpw|"
    r"community|secret|passwd|password|passphrase)[\w.-]*"
)
_CONF = compile_re2(
    rf"(?im)^[ \t]*(?:[\w-]+[ \t]+)?(?P<key>{_CONF_KEY})(?:[ \t]+--?[\w-]+)*(?:[ \t]*[=:][ \t]*|[ \t]+)"
    r"(?:\"(?P<q1>[^\"\n]+)\"|'(?P<q2>[^'\n]+)'|(?P<v>[^\s\"'#;][^\s\"']*))"
)
# The keys no prose uses (`redis.conf still has requirepass …`, `slapd.conf: rootpw … and bindpw …`): anywhere
# on a line, after white space or punctuation. The generic ones (`password`, `secret`) stay at a line's
# start, where a config file puts them: mid-sentence, "the password policy" would read as a key and a value.
_CONF_ANYWHERE = compile_re2(
    r"(?i)(?:^|[\s;,(\[{])(?P<key>requirepass|masterauth|masterpass|bindpw|rootpw|[\w.-]*authtok|"
    r"snmp-server[ \t]+community)(?:[ \t]+--?[\w-]+)*(?:[ \t]*[=:][ \t]*|[ \t]+)"
    r"(?:\"(?P<q1>[^\"\n]+)\"|'(?P<q2>[^'\n]+)'|(?P<v>[^\s\"'#;,][^\s\"',;]*))"
)
# Keys that look like a secret's name but name something else.
_CONF_NOT = ("_file", "_path", "_command", "_cmd", "_min", "_max", "_length", "_policy", "_expire", "_age", "_type")
# Values that say how a secret is kept or what a line does, not the secret.
_CONF_WORDS = frozenset(
    {"yes", "no", "on", "off", "true", "false", "none", "null", "required", "optional", "ro", "rw", "file", "view"}
)


_USERLIST_LINE = compile_re2(r"(?i)[^\n]*(?:userlist|pgbouncer)[^\n]*")
_USERLIST_PAIR = compile_re2(r"\"[\w.@-]{1,63}\"[ \t]+\"(?P<s>[^\"\s]{4,})\"")


def _userlist_pairs(text: str) -> Iterator[Span]:
    number = Groups(_USERLIST_PAIR).s
    for line in _USERLIST_LINE.finditer(text):
        for pair in _USERLIST_PAIR.finditer(line.group()):
            start, end = pair.span(number)
            yield line.start() + start, line.start() + end


_CRYPT = compile_re2(r"\$(?:[0-9]|2[aby]|y|gy|sha1|md5)\$")  # a crypt(3) hash, not a ${TEMPLATE}


def _conf_lines(text: str) -> Iterator[Span]:
    yield from _conf_values(text, _CONF)
    yield from _conf_values(text, _CONF_ANYWHERE)


def _conf_values(text: str, compiled: re2._Regexp) -> Iterator[Span]:
    groups = Groups(compiled)
    for m in compiled.finditer(text):
        key = m.group(groups.key).lower()
        if key.endswith(_CONF_NOT):
            continue
        for group in (groups.q1, groups.q2, groups.v):
            value = m.group(group)
            if value is None:
                continue
            template = value.startswith(("$", "{{", "<", "%(")) and not _CRYPT.match(value)
            if len(value) >= 4 and value.lower() not in _CONF_WORDS and not template:
                yield m.span(group)
            break


# A password hash anywhere: a crypt(3) string (`$1$`, `$2b$`, `$5$`, `$6$`, yescrypt's `$y$`), an argon2 or
# a Kerberos AS-REP/TGS hash as cracking tools print them. Offline guessing turns each into its password,
# and the shape is the format's own, so no word need stand beside it.
_PASSWORD_HASH = pattern(
    "password hash",
    r"(?i)(?:^|[^\w$])(?P<s>\$(?:1|2[aby]|5|6|7|8|9|y|gy|sha1|md5|argon2(?:id|i|d)|krb5(?:asrep|tgs|pa)|pbkdf2[\w-]*)"
    r"\$[A-Za-z0-9./$=,@:+*_-]{16,})",
    group="s",
    keywords=tuple("$1$ $2a$ $2b$ $2y$ $5$ $6$ $7$ $8$ $9$ $y$ $gy$ $sha1$ $md5$ $argon2 $krb5 $pbkdf2".split()),
)

CONFIG = [
    _PASSWORD_HASH,
    Detector(
        "config key that says secret",
        _conf_lines,
        frozenset(
            {"authtok", "psk", "preshared", "bindpw", "requirepass", "masterauth", "masterpass", "rootpw", "community"}
        ),
    ),
    # strongSwan / libreswan ipsec.secrets: `: PSK "x"`, `host : XAUTH user "x"`, `: EAP "x"`.
    pattern(
        "ipsec.secrets",
        r"(?i):\s*(?:PSK|XAUTH|EAP|NTLM|PIN)\s+(?:[\w@.-]+\s+)?\"(?P<s>[^\"\n]+)\"",
        group="s",
        keywords=("psk", "xauth", "eap", "ntlm", "pin"),
    ),
    # Cisco IOS: `username x password 7 <hash>`, `enable secret 5 <hash>` (type 7 decodes in seconds).
    pattern(
        "Cisco password",
        r"(?i)\b(?:password|secret)\s+[0-9]\s+(?P<s>\S+)",
        group="s",
        keywords=("password", "secret"),
    ),
    # pgbouncer userlist.txt: `"user" "password or md5... or SCRAM-SHA-256$..."`, one per line.
    pattern(
        "pgbouncer userlist",
        r"(?m)^[ \t]*\"[\w.@-]{1,63}\"[ \t]+\"(?P<s>[^\"\n]{4,})\"[ \t]*$",
        group="s",
        keywords=('" "',),
    ),
    # ... and quoted from it mid-sentence, on a line that names it ("userlist.txt has "app" "md5…"").
    Detector("pgbouncer userlist quoted", lambda text: _userlist_pairs(text), frozenset({"userlist", "pgbouncer"})),
]

# -- CLIs ---------------------------------------------------------------------------------------------------

# One entry per tool: the tool's name, and the flag (or form) after which its password comes. Each is its
# own detector, named for the tool, with its own test (tests/test_redact.py).
CLI_FLAGS: tuple[tuple[str, ...], ...] = (
    ("ipmitool", r"\bipmitool\b", r"\s-P[ \t]+"),
    ("httpie", r"\bhttps?\b", r"\s(?:-a|--auth)[ \t=]+[\"']?[^\s:\"']+:"),
    ("etcdctl", r"\betcdctl\b", r"\s--user[ \t=]+[\"']?[^\s:\"']+:|\s--password[ \t=]+"),
    ("cqlsh", r"\bcqlsh\b", r"\s(?:-p|--password)[ \t=]+"),
    ("mosquitto", r"\bmosquitto_(?:pub|sub|rr)\b", r"\s(?:-P|--pw)[ \t]+"),
    ("PsExec", r"(?i)\bpsexec(?:64)?(?:\.exe)?\b", r"\s-p[ \t]+"),
    ("xfreerdp", r"\bx?freerdp3?\b|\bwlfreerdp\b", r"\s/p:"),
    ("net user", r"(?i)\bnet\s+user\s+[^\s/]+", r"[ \t]+", r"[ \t]+/add\b"),
    ("rabbitmqctl", r"\brabbitmqctl\b", r"\s(?:change_password|add_user)[ \t]+\S+[ \t]+"),
    ("az login", r"\baz\s+login\b", r"\s(?:-p|--password)[ \t=]+"),
    ("snmp tools", r"\bsnmp(?:walk|get|getnext|bulkwalk|bulkget|set|table|trap|check)\b", r"\s-c[ \t]*"),
)


def _cli(tool: str, command: str, flag: str, after: str = "") -> Detector:
    compiled = compile_re2(rf"(?:{command})[^\n]*?(?:{flag})[\"']?(?P<s>[^\s\"']+){after}")
    number = Groups(compiled).s
    keyword = next(w for w in tool.lower().replace("_", " ").split() if len(w) > 1)

    def find(text: str) -> Iterator[Span]:
        for m in compiled.finditer(text):
            start, end = m.span(number)
            value = text[start:end]
            if start < end and not value.startswith(("$", "{{", "<", "%")):
                yield start, end

    return Detector(f"{tool} password", find, frozenset({"http" if tool == "httpie" else keyword.split()[0]}))


CLIS = [_cli(*row) for row in CLI_FLAGS]

# -- cookies ------------------------------------------------------------------------------------------------

_CURL_COOKIE = compile_re2(
    r"\bcurl\b[^\n]*?\s(?:-b|--cookie)[ \t=]+(?:\"(?P<q1>[^\"\n]*)\"|'(?P<q2>[^'\n]*)'|(?P<v>\S+))"
)
_PAIR = compile_re2(r"[^=;\s]+=(?P<s>[^;\s]{4,})")

COOKIES = [
    # curl -b / --cookie "name=value; name2=value2" (a file name has no "=": kept).
    Detector(
        "curl cookie",
        lambda text: _pairs_after(text, _CURL_COOKIE),
        frozenset({"-b", "--cookie"}),
    ),
    # A HAR file's cookies and sensitive headers: {"name": "session", "value": "..."}.
    pattern(
        "HAR cookie or header value",
        r"(?i)\"name\"\s*:\s*\"[^\"\n]{1,100}\"\s*,\s*\"value\"\s*:\s*\"(?P<s>[^\"\n]{4,})\"",
        group="s",
        keywords=("cookie", "authorization"),
    ),
]


def _pairs_after(text: str, compiled: re2._Regexp) -> Iterator[Span]:
    g = Groups(compiled)
    for m in compiled.finditer(text):
        for group in (g.q1, g.q2, g.v):
            if m.group(group) is None:
                continue
            base = m.start(group)
            for pair in _PAIR.finditer(m.group(group)):
                start, end = pair.span(1)
                yield base + start, base + end
            break


# -- hooks and routing keys ---------------------------------------------------------------------------------

HOOKS = [
    # Mattermost (and Rocket.Chat, Zulip-alike) incoming hooks: /hooks/<token>.
    pattern("hook URL token", r"(?i)https?://[^\s/]+/hooks/(?P<s>[A-Za-z0-9]{20,})", group="s", keywords=("/hooks/",)),
    # Splunk On-Call (VictorOps) REST endpoint: .../integrations/generic/<id>/alert/<key>/<routing key>.
    pattern(
        "Splunk On-Call REST key",
        r"(?i)alert\.victorops\.com/integrations/[\w/]*?/alert/(?P<s>[0-9a-f-]{32,36})",
        group="s",
        keywords=("victorops",),
    ),
    # PagerDuty Events API routing and integration keys; Alertmanager's `service_key` / `routing_key`.
    pattern(
        "pager routing key",
        r"(?i)\b(?:routing|service|integration)[_-]?key[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9]{20,40})\b",
        group="s",
        keywords=("routing", "service", "integration"),
    ),
]

# -- wallets ------------------------------------------------------------------------------------------------


@cache
def _bip39() -> frozenset[str]:
    """BIP-39's English word list (from the `mnemonic` package, Trezor's reference implementation)."""
    text = resources.files("mnemonic").joinpath("wordlist/english.txt").read_text(encoding="utf-8")
    return frozenset(text.split())


# Runs of twelve lower-case words or more, separated by spaces or line breaks only.
_WORD_RUN_REGEX = r"\b[a-z]{3,8}(?:[ \t]*\n?[ \t]*\b[a-z]{3,8}\b){11,}"
_WORD_RUN = compile_re2(_WORD_RUN_REGEX)
_WORD = compile_re2(r"[a-z]+")


def _mnemonics(text: str) -> Iterator[Span]:
    """Twelve or more words in a row, each of BIP-39's list: a wallet's seed phrase. Each run of lower-case
    words is read once, word by word, and every stretch of twelve list words or more in it is the phrase."""
    words = _bip39()
    for run in _WORD_RUN.finditer(text):
        base, count, first, last = run.start(), 0, 0, 0
        for w in _WORD.finditer(run.group()):
            if w.group() in words:
                if count == 0:
                    first = w.start()
                count, last = count + 1, w.end()
                continue
            if count >= 12:
                yield base + first, base + last
            count = 0
        if count >= 12:
            yield base + first, base + last


WALLETS = [
    # An Ethereum (or any secp256k1) private key: 64 hex digits, with or without 0x, next to its name. A bare
    # 0x-and-64-hex is a transaction or block hash, public: kept.
    pattern(
        "wallet private key",
        r"(?i)\b(?:private[ _-]?key|privkey|priv[ _-]key|secret[ _-]?key|wallet[ _-]?key)\b[^\n]{0,30}?"
        r"\b(?:0x)?(?P<s>[0-9a-f]{64})\b",
        group="s",
        keywords=("priv", "secret", "wallet"),
    ),
    Detector("seed phrase", _mnemonics, trigger=_WORD_RUN_REGEX),
]

# -- prose --------------------------------------------------------------------------------------------------

# "the password is bluebird-orchard", "Passwort: Sommer2026!", "das Kennwort lautet Herbst#77",
# "mot de passe : Soleil2026", "contraseña: Verano2026": the word for password in a language, a colon or
# that language's "is", then the value.
_PROSE = compile_re2(
    r"(?i)\b(?:password|passwort|kennwort|mot de passe|contraseña|contrasena|clave|senha|wachtwoord|"
    r"lösenord|losenord|salasana|hasło|haslo|parola|heslo|jelszó|пароль)"
    r"\s*(?:[:=]|\s+(?:is|was|ist|lautet|war|est|était|es|era|é|era|is|är|on|è|jest|je|:)\b\s*:?)\s*"
    r"(?P<s>[^\s\"'.,;:!?]+(?:[.,;:!?][^\s\"']+)*)"
)
_PROSE_G = Groups(_PROSE)
_NOT_A_PASSWORD = frozenset(
    {
        "required",
        "incorrect",
        "invalid",
        "wrong",
        "expired",
        "empty",
        "missing",
        "correct",
        "set",
        "unset",
        "changed",
        "reset",
        "needed",
        "optional",
        "disabled",
        "enabled",
        "locked",
        "weak",
        "strong",
        "the",
        "not",
        "also",
        "still",
        "now",
        "being",
        "too",
        "stored",
        "rotated",
        "hashed",
        "encrypted",
        "masked",
        "redacted",
        "hidden",
        "known",
        "unknown",
        "same",
        "different",
        "valid",
        "a",
        "an",
        "in",
        "on",
        "at",
        "for",
        "from",
        "falsch",
        "abgelaufen",
        "erforderlich",
        "incorrecto",
        "requerido",
        "obligatoire",
        "expiré",
        "richtig",
        "noch",
        "nicht",
        "leer",
        "vide",
        "vacío",
    }
)


def _prose(text: str) -> Iterator[Span]:
    for m in _PROSE.finditer(text):
        value = m.group(_PROSE_G.s).rstrip(".,;:!?)")
        low = value.lower()
        if low in _NOT_A_PASSWORD or low.startswith(("$", "{{", "<", "[redacted", "*")):
            continue
        # A value that reads as a word of prose ("password is Rotation") is not one: it must hold a digit, a
        # symbol, a dash or a capital inside it, and be six characters or more.
        if len(value) >= 6 and (any(not c.isalpha() for c in value) or any(c.isupper() for c in value[1:])):
            start = m.start(_PROSE_G.s)
            yield start, start + len(value)


PROSE = [
    Detector(
        "password told in prose",
        _prose,
        frozenset(
            {
                "password",
                "passwort",
                "kennwort",
                "mot de passe",
                "contraseña",
                "contrasena",
                "clave",
                "senha",
                "wachtwoord",
                "lösenord",
                "losenord",
                "salasana",
                "hasło",
                "haslo",
                "parola",
                "heslo",
                "jelszó",
                "пароль",
            }
        ),
    )
]

OPS: list[Detector] = [*SQL, *CONFIG, *CLIS, *COOKIES, *HOOKS, *WALLETS, *PROSE]
