import json

import pytest
from conftest import make_incident

from oncall_memory.ingest import prepare
from oncall_memory.redact import MARKER, redact

SECRETS = [
    ("Authorization: Bearer abcdef1234567890abcdef", "abcdef1234567890abcdef"),
    ("db at postgres://app:hunter2pass@db:5432/orders", "hunter2pass"),
    ("key AKIAIOSFODNN7EXAMPLE leaked", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA"),
    ("password: s3cretpass", "s3cretpass"),
    ('"api_key": "abc123def456"', "abc123def456"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("slack xoxb-1234-5678-abcdefghij", "xoxb-1234-5678-abcdefghij"),
    ("OPENAI sk-proj-abcdefghijklmnopqrstuvwx", "sk-proj-abcdefghijklmnopqrstuvwx"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNry"),
]


@pytest.mark.parametrize("text,secret", SECRETS)
def test_secret_is_replaced_by_the_marker(text, secret):
    cleaned = redact(text)
    assert secret not in cleaned
    assert MARKER in cleaned


def test_ordinary_text_is_left_alone():
    text = "token bucket rate limiting; password reset emails delayed; keys rotated"
    assert redact(text) == text


def test_secrets_never_reach_the_embedded_text_or_the_payload():
    incident = make_incident(
        title="auth crash: signing_key=sk_live_51HxQjKLmnoPQRstuVWxyz012345",
        oncall_note="curl -H 'Authorization: Bearer abcdef1234567890abcdef' worked",
        url="https://admin:topsecretpw@grafana.example/d/1",
        fixes_attempted=[{"action": "rotate password=hunter2hunter2", "outcome": "resolved"}],
    )
    prepared = prepare(incident)
    stored = prepared.text + json.dumps(prepared.payload)
    for secret in ("sk_live_51HxQj", "abcdef1234567890abcdef", "topsecretpw", "hunter2hunter2"):
        assert secret not in stored
    assert MARKER in prepared.text
