"""Identifiers their vendors document as public, which look random enough to be taken for a secret:
request ids (`x-amz-id-2`), host-key fingerprints, payment and deployment object ids, paging and resume
tokens, certificates and public keys, object-store paths. A find of a detector that judges by randomness or
by a key's name alone is dropped when it lies wholly inside one of these; a vendor's secret shape
(`ghp_`, `sk_live_`) is never dropped, wherever it stands.
"""

from __future__ import annotations

from .base import Span, compile_re2

_PUBLIC = compile_re2(
    "|".join(
        (
            # AWS request and object ids in headers and logs.
            r"(?i)\bx-amz-(?:id-2|cf-id|request-id|version-id|bucket-region)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9+/=_.-]+",
            # SSH host-key and key fingerprints.
            r"\bSHA256:[A-Za-z0-9+/]{43}=?",
            r"\bMD5(?::[0-9a-f]{2}){16}",
            # Stripe object ids (a secret key is sk_/rk_, a webhook secret whsec_: not these).
            r"\b(?:pi|ch|cus|in|re|pm|py|po|tr|txn|evt|seti|sub|si|prod|price|ii|il|cs|acct|ba|card|src|pyr|ich|"
            r"dp|du|fr|ipi|cbtxn|cn|prv|iv)_(?:test_|live_)?[A-Za-z0-9]{14,64}\b",
            # Subresource integrity digests (npm's lockfile, a <script integrity=…>): a hash of public bytes.
            r"\b(?:sha256|sha384|sha512)-[A-Za-z0-9+/]{40,}={0,2}",
            # Vercel deployment ids.
            r"\bdpl_[A-Za-z0-9]{20,40}\b",
            # Paging, resume and continuation tokens (Google APIs, MongoDB change streams, S3 listings).
            r"(?i)\b(?:next_?page_?token|page_?token|resume_?token|resume_?after|continuation_?token|"
            r"next_?continuation_?token|sync_?token|next_?cursor|cursor|next_?marker|start_?after)"
            r"[\"']?\s*[:=]\s*(?:\{\s*\"_data\"\s*:\s*)?[\"']?[^\s\"',}]+",
            r"\"_data\"\s*:\s*\"[0-9A-Fa-f]{20,}\"",
            # Certificates, public keys and signing requests: public by design.
            r"-----BEGIN (?:CERTIFICATE|TRUSTED CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE REQUEST|"
            r"NEW CERTIFICATE REQUEST|X509 CRL|PGP PUBLIC KEY BLOCK|SSH2 PUBLIC KEY)-----[A-Za-z0-9+/=\s\\n:-]*?"
            r"-----END [A-Z0-9 ]+-----",
            r"\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com) AAAA[A-Za-z0-9+/]+={0,2}",
            # Object-store paths: an object key is a name.
            r"\b(?:s3|s3a|gs|az|abfss?|wasbs?)://[^\s\"'<>]+",
            r"\barn:aws[\w-]*:s3:::[^\s\"'<>]+",
        )
    )
)

# The detectors that judge by randomness, or by a key's name alone, whose finds a public identifier overrides.
OVERRIDABLE = frozenset(
    {
        "high-entropy token",
        "a random token on a line naming its vendor",
        'secret keyword (password: / api_key= / "token": ...)',
        "credential after its scheme",
        "secret query parameter",
    }
)


def public_spans(text: str) -> list[Span]:
    return [m.span() for m in _PUBLIC.finditer(text)]


def inside(span: Span, spans: list[Span]) -> bool:
    return any(start <= span[0] and span[1] <= end for start, end in spans)
