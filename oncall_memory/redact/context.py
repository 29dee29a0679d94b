"""Secrets told by their context: the syntaxes in which responders and their tools write a password or a
key, which a token catalogue cannot know (the value of `password: correct horse battery staple` has no
shape of its own).

Each rule replaces the value only: the key, the flag, the host and the rest of the URL stay readable.
"""

from __future__ import annotations

from collections.abc import Iterator

from .base import Detector, Groups, Span, compile_re2, pattern
from .command_lines import COMMAND_LINES
from .context_words import ASSIGN as _ASSIGN
from .context_words import KEY_KEYWORDS, PASSWORD_KEYWORDS
from .context_words import KEY_WORDS as _KEY_WORDS
from .context_words import PASSWORD_WORDS as _PASSWORD_WORDS
from .encoded import ENCODED

# What follows a key word in a key name when the value is not the secret but something about it: a
# count, a name, where it is kept (`max_tokens: 4096`, `secretName: db-creds`, `password_file: /run/pw`).
_NOT_SECRET_SUFFIXES = (
    "s",
    "count",
    "length",
    "len",
    "ttl",
    "timeout",
    "expiry",
    "expires",
    "expiration",
    "name",
    "names",
    "ref",
    "file",
    "path",
    "arn",
    "type",
    "url",
    "endpoint",
    "version",
    "rotation",
    "policy",
    "age",
    "id",
    "ids",
    "stdin",
    "env",
    "source",
    "mode",
    "provider",
    "store",
    # what keeps or handles secrets, not one (`secret_manager: vault`, `credential_helper: ecr-login`)
    "manager",
    "helper",
    "backend",
    "engine",
    "driver",
    "plugin",
    "method",
    "scheme",
    "keyref",
    "secretref",
    "secretname",
    "usage",
    "limit",
    "used",
    "size",
    "bucket",
    "budget",
    "rate",
    "enabled",
    "required",
    "reset",
    "hint",
    "prompt",
)
# Values that stand for a secret without being one: templates, placeholders, an earlier redaction.
_TEMPLATES = ("$", "{{", "<", "[redacted", "%(")
_WORDS = frozenset(
    {
        "null",
        "none",
        "nil",
        "true",
        "false",
        "undefined",
        "required",
        "optional",
        "string",
        "str",
        "bool",
        "int",
        "empty",
        "redacted",
        "hidden",
        "masked",
    }
)


def _is_placeholder(value: str) -> bool:
    """A template (`${DB_PASS}`, `{{ .Values.pw }}`, `<password>`), a masked value (`****`, `xxxxxx`) or a
    word that stands for a value (`null`, `required`)."""
    low = value.lower()
    return (
        low.startswith(_TEMPLATES) or low in _WORDS or len(set(low) - {"x", "*", ".", "•"}) == 0 or len(set(low)) == 1
    )


def _suffix_says_not_secret(key_rest: str) -> bool:
    rest = key_rest.lower().strip("\"'").replace("-", "_").replace(".", "_").strip("_")
    if not rest:
        return False
    return rest in _NOT_SECRET_SUFFIXES or rest.split("_")[-1] in _NOT_SECRET_SUFFIXES


# Key words that also name things that are not secrets ("auth: SIMPLE", "token: expired"): their unquoted
# value counts only when it looks like a credential.
_WEAK_KEYS = ("auth", "token", "credential", "session")
_STRONG_IN_KEY = compile_re2(rf"(?i){_PASSWORD_WORDS}|secret|key")  # `auth.password`: the password decides


def _looks_like_a_credential(value: str) -> bool:
    return len(value) >= 20 or len(value) >= 8 and any(not c.isalpha() for c in value)


def _keyword_values(regex: str) -> Detector:
    """A value after a key word, unless the rest of the key says it is not the secret or the value is a
    placeholder. Group `word` is the key word, `rest` the key after it; groups `q1`, `q2`, `v` the value."""
    compiled = compile_re2(regex)
    g = Groups(compiled)

    def find(text: str) -> Iterator[Span]:
        for m in compiled.finditer(text):
            if _suffix_says_not_secret(m.group(g.rest) or ""):
                continue
            for group in (g.q1, g.q2, g.v):
                value = m.group(group)
                if value is None:
                    continue
                weak = (
                    group == g.v
                    and m.group(g.word).lower().strip("_").startswith(_WEAK_KEYS)
                    and not _STRONG_IN_KEY.search(m.group(g.rest) or "")
                )
                # After a weak key, an object printed by its toString (`token=Token{a64f992`) is no credential.
                credential = _looks_like_a_credential(value) and "{" not in value
                if not _is_placeholder(value) and (not weak or credential):
                    yield m.span(group)
                break

    return Detector(
        'secret keyword (password: / api_key= / "token": ...)', find, frozenset(PASSWORD_KEYWORDS + KEY_KEYWORDS)
    )


def _passphrases() -> Detector:
    """`password: correct horse battery staple`: after a password key, a colon and a space (YAML, prose),
    the value runs to the end of the line (or a `;` or `,`), since a passphrase is several words."""
    compiled = compile_re2(rf"(?i)(?:{_PASSWORD_WORDS})(?P<rest>[\w.-]*)[\"']?[ \t]*:[ \t]+(?P<v>[^\s\"'][^\n;,]*)")
    g = Groups(compiled)

    def find(text: str) -> Iterator[Span]:
        for m in compiled.finditer(text):
            value = m.group(g.v).rstrip()
            if not _suffix_says_not_secret(m.group(g.rest)) and not _is_placeholder(value):
                start = m.start(g.v)
                yield start, start + len(value)

    return Detector("passphrase after password:", find, frozenset(PASSWORD_KEYWORDS))


_VALUE = r"(?:\"(?P<q1>[^\"\n]{3,})\"|'(?P<q2>[^'\n]{3,})'|(?P<v>[^\s\"',;}&<>\[\]()]{3,}))"

KEYWORD_VALUES = _keyword_values(rf"(?i)(?P<word>{_PASSWORD_WORDS}|{_KEY_WORDS})(?P<rest>[\w.-]*){_ASSIGN}{_VALUE}")


def _flags() -> Detector:
    """`--password X`, `--client-secret=X`, `-storepass X`, `-passin pass:X` (openssl's `env:` and `file:`
    name where the secret is, so they are kept)."""
    compiled = compile_re2(
        r"(?i)(?:^|[\s\"'`(])--?(?P<key>[\w-]*(?:password|passwd|passphrase|pass|pw|secret|token|api-?key|"
        r"auth-?key|authkey|access-?key|storepass|keypass|passin|passout))(?:=|[ \t]+)"
        r"(?:\"(?P<q1>[^\"\n]+)\"|'(?P<q2>[^'\n]+)'|(?P<v>[^\s\"'-][^\s\"']*))"
    )

    g = Groups(compiled)

    def find(text: str) -> Iterator[Span]:
        for m in compiled.finditer(text):
            key = m.group(g.key).lower()
            if key.endswith(("-stdin", "-file", "-env", "-path", "-ttl", "-name")):
                continue
            for group in (g.q1, g.q2, g.v):
                value = m.group(group)
                if value is None:
                    continue
                start, end = m.span(group)
                low = value.lower()
                if low.startswith(("env:", "file:", "fd:", "stdin")):
                    break
                if low.startswith("pass:"):  # openssl
                    start += 5
                if not _is_placeholder(text[start:end]):
                    yield start, end
                break

    return Detector(
        "--password flag",
        find,
        frozenset({"-pass", "-pw", "secret", "token", "key", "auth", "-storepass", "-keypass", "-passin", "-passout"}),
    )


_URL_USERINFO_REGEX = r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/@:\"'<>]*:"
_URL_USERINFO = compile_re2(_URL_USERINFO_REGEX)


def _url_passwords(text: str) -> Iterator[Span]:
    """`scheme://user:password@host`: the password may hold `/`, `:` or `@` (people paste what they have), so
    the host is what follows the last `@` of the address that is followed by a host name.

    One pass from the address's end: a host holds no `@`, so the host of each `@` ends at the first of `/?#`
    or the next `@` after it, and those stretches do not overlap: linear however many `@` an attacker sends
    (reading the whole rest of the address again for each cost 79 s at 63 KB)."""
    scanned = 0  # where the last address read ended: an address inside it was read with it
    for m in _URL_USERINFO.finditer(text):
        if m.start() < scanned:
            continue
        start = end = m.end()
        while end < len(text) and not text[end].isspace() and text[end] not in "\"'<>":
            end += 1
        scanned = end
        host_end = end  # the first of "/?#" after the position being read
        next_at = None  # the nearest "@" after it
        for at in range(end - 1, start - 1, -1):
            c = text[at]
            if c in "/?#":
                host_end = at
            elif c == "@":
                if (next_at is None or next_at > host_end) and at > start and _HOST.fullmatch(text[at + 1 : host_end]):
                    yield start, at
                    break
                next_at = at


_HOST = compile_re2(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::\d{1,5})?|\[[0-9A-Fa-f:.]+\](?::\d{1,5})?")


def _cookies(text: str) -> Iterator[Span]:
    """Every value of a `Cookie:` or `Set-Cookie:` line (a session cookie is a login)."""
    low = text.lower()
    at = low.find("cookie")
    while at != -1:
        colon = at + len("cookie")
        while colon < len(text) and text[colon] in " \t\"'":
            colon += 1
        if colon < len(text) and text[colon] in ":=":
            line_end = text.find("\n", colon)
            line_end = len(text) if line_end == -1 else line_end
            pos = colon + 1
            while pos < line_end:
                eq = text.find("=", pos, line_end)
                if eq == -1:
                    break
                value_end = eq + 1
                while value_end < line_end and text[value_end] not in "; \t\"'":
                    value_end += 1
                if value_end - eq > 4:
                    yield eq + 1, value_end
                pos = value_end + 1
            at = low.find("cookie", line_end)
        else:
            at = low.find("cookie", at + 1)


_PROSE_PASSWORD = compile_re2(r"(?i)\b(?:password|passwd|passphrase)\s+(?:is\s+|was\s+)?(?P<s>[^\s\"']{8,})")


_PROSE_GROUPS = Groups(_PROSE_PASSWORD)


def _prose_passwords(text: str) -> Iterator[Span]:
    """`... user ops password Xy7pQ2... in the configmap`: a credential-looking word right after "password"."""
    for m in _PROSE_PASSWORD.finditer(text):
        value = m.group(_PROSE_GROUPS.s).rstrip(".,;:)")
        # A word with a digit, or with a capital inside it: "password Rotation" is prose, "password yQaFl..." not.
        mixed = any(c.isdigit() for c in value) or any(c.isupper() for c in value[1:])
        if _looks_like_a_credential(value) and mixed and not _is_placeholder(value):
            start = m.start(_PROSE_GROUPS.s)
            yield start, start + len(value)


_AUTHORIZATION = compile_re2(
    r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?P<scheme>[A-Za-z][\w-]*)\s+)?(?P<s>[^\s\"',;]{6,})"
)
_AUTH_G = Groups(_AUTHORIZATION)


def _authorization(text: str) -> Iterator[Span]:
    """`Authorization: <scheme> <credentials>`: the credentials, when they look like one (`Authorization:
    failed for 42 requests` is a log line about it, kept whole)."""
    for m in _AUTHORIZATION.finditer(text):
        value = m.group(_AUTH_G.s)
        if _looks_like_a_credential(value) and not _is_placeholder(value):
            yield m.span(_AUTH_G.s)


# Scheme words a credential follows. Bearer, SSWS and GenieKey are never anything else: any token after
# them is taken; the others are also ordinary words ("POST /oauth/token 401", "splunk 9.1.2", "a basic
# 3-node cluster", "negotiate 0x80090308"), so the token must look like a credential.
_SCHEMES = ("bearer", "ssws", "geniekey", "basic", "digest", "token", "splunk", "apikey", "api-key", "negotiate")
_SURE_SCHEMES = ("bearer", "ssws", "geniekey")
_AFTER_SCHEME = compile_re2(
    rf"(?i)(?P<before>.?)\b(?P<scheme>{'|'.join(_SCHEMES)})\s+(?P<s>[A-Za-z0-9._~+/=:-]*\d[A-Za-z0-9._~+/=:-]*)"
)
_AFTER_G = Groups(_AFTER_SCHEME)
_HASH_NAMED = compile_re2(r"(?i)(?:sha(?:1|224|256|384|512)|md5|blake2b?|xxh\d*):")
_NOT_A_CREDENTIAL = compile_re2(
    r"(?i)\d{1,5}|v?\d+(?:\.\d+)+(?:-[\w.]+)?|0x[0-9a-f]{1,16}|\d+[-_][a-z]+|[a-z]+[-_]\d+|\d+(?:ms|s|m|h|d|k|kb|mb|gb)"
)


def _after_scheme(text: str) -> Iterator[Span]:
    for m in _AFTER_SCHEME.finditer(text):
        value, scheme = m.group(_AFTER_G.s), m.group(_AFTER_G.scheme).lower()
        if scheme == "digest" and _HASH_NAMED.match(value):
            continue  # an image's or a file's digest (`digest sha256:…`), not HTTP Digest auth
        if scheme not in _SURE_SCHEMES:
            # A path segment (/oauth/token), a version, a status or hex code, a count: not a credential.
            if m.group(_AFTER_G.before) in ("/", ".", "_") or _NOT_A_CREDENTIAL.fullmatch(value):
                continue
            if len(value) < 8 or not any(c.isalpha() for c in value):
                continue
        yield m.span(_AFTER_G.s)


CONTEXT: list[Detector] = [
    KEYWORD_VALUES,
    _passphrases(),
    _flags(),
    Detector("password in a URL", _url_passwords, trigger=_URL_USERINFO_REGEX),
    Detector("cookie", _cookies, frozenset({"cookie"})),
    *ENCODED,  # credentials wrapped in base64 (`encoded`)
    # Whole PEM blocks (also with escaped "\n" inside JSON, and a block cut off before its END line).
    pattern(
        "private key block",
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        keywords=("private key",),
    ),
    pattern("PuTTY private key", r"(?s)PuTTY-User-Key-File-\d.*?(?:Private-MAC: \S+|\z)", keywords=("putty-user-key",)),
    # "Authorization: <any scheme> <credentials>", and a scheme word before a credential-looking token.
    Detector("authorization header", _authorization, frozenset({"authorization"})),
    Detector("credential after its scheme", _after_scheme, frozenset(_SCHEMES)),
    # Signed URLs and secrets passed as query parameters.
    pattern(
        "secret query parameter",
        r"(?i)[?&;](?:x-amz-signature|x-amz-security-token|x-goog-signature|sig|"
        r"signature|token|access_token|refresh_token|id_token|auth_token|api_key|apikey|api-key|key|code|"
        r"client_secret|secret|password|passwd|pwd|auth|sessionid|session_id|jwt)=(?P<s>[^&#\s\"'<>]{8,})",
        group="s",
        keywords=("sig", "token", "key", "code", "secret", "pass", "pwd", "auth", "session", "jwt"),
    ),
    pattern(
        "connection-string key",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecret)="
        r"(?P<s>[^;\s\"']+)",
        group="s",
        keywords=("accountkey=", "sharedaccess", "sharedsecret="),
    ),
    pattern(
        "XML secret element",
        r"(?i)<(?P<k>[\w:.-]*(?:password|passwd|secret|token|apikey|api_key|accesskey|"
        r"privatekey)[\w.-]*)>(?P<s>[^<\n]{1,512})</",
        group="s",
        keywords=("pass", "secret", "token", "apikey", "api_key", "accesskey", "privatekey"),
    ),
    *COMMAND_LINES,  # everyday tools' own password flags (`command_lines`)
    pattern(
        "personal access token",
        r"(?i)\b(?:pat|personal[ _-]access[ _-]token)\b[^\n]{0,30}?\b"
        r"(?P<s>[a-z2-7]{52}|[A-Za-z0-9]{84})\b",
        group="s",
        keywords=("pat", "personal access token"),
    ),
    Detector("password in prose", _prose_passwords, frozenset({"pass"})),
    pattern(
        "hex key next to its name",
        r"(?i)\b(?:api|app|application|license|insert|ingest|admin|master|"
        r"signing|encryption|secret|auth)[ _-]?(?:key|token|secret)\b[^\n]{0,40}?\b(?P<s>[0-9a-f]{32}|"
        r"[0-9a-f]{40}|[0-9a-f]{64})\b",
        group="s",
        keywords=("key", "token", "secret"),
    ),
]
