"""A corpus of secret shapes as on-call people paste them: each a sentence holding one secret, and the
secret itself (what must never come out again). Values are generated (seeded), never real, and built
at test time so no secret-shaped literal sits in the repository."""

from __future__ import annotations

import base64
import random
import string
from typing import NamedTuple

_rng = random.Random(20261129)
LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


class Shape(NamedTuple):
    name: str
    text: str  # how it shows up in a note
    secrets: tuple[str, ...]  # what must not appear anywhere afterwards


def _shape(name: str, template: str, *secrets: str) -> Shape:
    return Shape(name, template.format(*secrets), secrets)


def _pem(kind: str) -> tuple[str, str]:
    body = "\n".join(r(B64, 64) for _ in range(4))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----", body.splitlines()[1]


def corpus() -> list[Shape]:
    rsa, rsa_line = _pem("RSA PRIVATE KEY")
    ssh, ssh_line = _pem("OPENSSH PRIVATE KEY")
    ec, ec_line = _pem("EC PRIVATE KEY")
    pk8, pk8_line = _pem("PRIVATE KEY")
    sa_key = pk8.replace("\n", "\\n")
    k8s_a, k8s_b = base64.b64encode(r(ALNUM, 14).encode()).decode(), base64.b64encode(r(ALNUM, 9).encode()).decode()
    jwt = "eyJ" + r(URLSAFE, 30) + ".eyJ" + r(URLSAFE, 60) + "." + r(URLSAFE, 43)
    basic = base64.b64encode(f"deploy:{r(ALNUM, 14)}".encode()).decode()
    docker_auth = base64.b64encode(f"ci-bot:{r(ALNUM, 20)}".encode()).decode()
    url_pw = r(ALNUM, 6) + "/" + r(ALNUM, 4) + "@" + r(ALNUM, 5)
    words = "correct horse battery staple"
    return [
        _shape("AWS access key id", "IAM user key {} was used from an unknown IP", "AKIA" + r(UPPER + "234567", 16)),
        _shape("AWS secret access key", "aws_secret_access_key = {}", r(B64, 40)),
        _shape("AWS session token", "export AWS_SESSION_TOKEN={}", "FwoGZXIvYXdzE" + r(B64, 120)),
        _shape("GitHub classic token", "the runner used {} to clone", "ghp_" + r(ALNUM, 36)),
        _shape("GitHub fine-grained token", "token github_pat_{} expired", "11A" + r(ALNUM, 19) + "_" + r(ALNUM, 59)),
        _shape("GitHub OAuth token", "oauth {} was revoked", "gho_" + r(ALNUM, 36)),
        _shape("GitLab token", "gitlab-runner registered with {}", "glpat-" + r(URLSAFE, 20)),
        _shape("Slack bot token", "bot posted with {}", "xoxb-" + r(DIGITS, 12) + "-" + r(DIGITS, 13) + "-" + r(ALNUM, 24)),
        _shape("Slack user token", "legacy {} in the cron", "xoxp-" + r(DIGITS, 12) + "-" + r(DIGITS, 12) + "-" + r(DIGITS, 13) + "-" + r(HEX, 32)),
        _shape("Slack webhook URL", "alerts go to https://hooks.slack.com/services/{}",
               "T" + r(UPPER + DIGITS, 8) + "/B" + r(UPPER + DIGITS, 10) + "/" + r(ALNUM, 24)),
        _shape("Slack app token", "socket mode app token {}", "xapp-1-A" + r(UPPER + DIGITS, 10) + "-" + r(DIGITS, 13) + "-" + r(HEX, 64)),
        _shape("OpenAI project key", "embedder failed with key {}", "sk-proj-" + r(URLSAFE, 48)),
        _shape("Anthropic key", "ANTHROPIC key {} hit the rate limit", "sk-ant-api03-" + r(URLSAFE, 93) + "AA"),
        _shape("Stripe secret key", "checkout called stripe with {}", "sk_live_" + r(ALNUM, 24)),
        _shape("Stripe restricted key", "refunds use {}", "rk_live_" + r(ALNUM, 24)),
        _shape("Google API key", "maps quota on {}", "AIza" + r(URLSAFE, 35)),
        _shape("GCP service-account key", '{{"type": "service_account", "private_key": "{}"}}', sa_key),
        _shape("RSA private key", "the pod mounted\n{}\nfrom the wrong secret", rsa),
        _shape("OpenSSH private key", "bastion key:\n{}", ssh),
        _shape("EC private key", "tls key\n{}", ec),
        _shape("JWT", "request carried {} and was rejected", jwt),
        _shape("Bearer header", "curl -H 'Authorization: Bearer {}' https://api.internal/v1", r(URLSAFE, 40)),
        _shape("Basic auth header", "Authorization: Basic {}", basic),
        _shape("URL password", "postgres://orders:{}@orders-db.internal:5432/orders refused", r(ALNUM, 16)),
        _shape("URL password with / and @", "amqp://svc:{}@mq.internal:5672 down", url_pw),
        _shape("Azure storage account key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net",
               r(B64, 86) + "=="),
        _shape("Azure SAS signature", "https://acme.blob.core.windows.net/dumps/heap.hprof?sv=2022-11-02&sr=b&sig={}&se=2026-12-01",
               r(ALNUM, 20) + "%2B" + r(ALNUM, 20) + "%3D"),
        _shape("Azure Service Bus key", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={}",
               r(B64, 43) + "="),
        Shape("Kubernetes Secret data", f"kubectl get secret db-creds -o yaml shows data:\n  password: {k8s_a}\n  username: {k8s_b}",
              (k8s_a, k8s_b)),
        _shape("Datadog API key (bare hex)", "dd-agent logs: API Key invalid {} (403)", r(HEX, 32)),
        _shape("Datadog application key", "DD_APP_KEY={}", r(HEX, 40)),
        _shape("Vault token", "vault login worked with {}", "hvs." + r(URLSAFE, 90)),
        _shape("Twilio API key", "sms provider key {} suspended", "SK" + r(HEX, 32)),
        _shape("SendGrid key", "mail relay uses {}", "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43)),
        _shape("mysql -p", "ran mysql -h orders-db -u admin -p{} orders to check", r(ALNUM, 14)),
        _shape("password with spaces", "password: {}", words),
        _shape("PGPASSWORD", "PGPASSWORD={} psql -h db", r(ALNUM, 18)),
        _shape("npm token", "//registry.npmjs.org/:_authToken={}", "npm_" + r(ALNUM, 36)),
        _shape("PyPI token", "twine upload with {}", "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 70)),
        _shape("Discord bot token", "discord bot {} disconnected",
               "M" + r(ALNUM, 23) + "." + r(URLSAFE, 6) + "." + r(URLSAFE, 27)),
        _shape("Mailchimp key", "newsletter key {}", r(HEX, 32) + "-us12"),
        _shape("Telegram bot token", "bot {} was blocked", r(DIGITS, 10) + ":AA" + r(URLSAFE, 33)),
        _shape("DigitalOcean token", "doctl auth with {}", "dop_v1_" + r(HEX, 64)),
        _shape("Shopify token", "store admin token {}", "shpat_" + r(HEX, 32)),
        _shape("Docker config auth", '{{"auths": {{"registry.acme.io": {{"auth": "{}"}}}}}}', docker_auth),
        _shape("client secret", "oauth client_secret={} leaked in logs", r(URLSAFE, 34)),
        _shape("--password flag", "helm upgrade --install app --password={} ./chart", r(ALNUM, 16)),
        _shape("redis-cli -a", "redis-cli -h cache -a {} info", r(ALNUM, 20)),
        _shape("Kafka SASL password", 'sasl.jaas.config=PlainLoginModule required username="svc" password="{}";', r(ALNUM, 22)),
        _shape("Heroku API key", "HEROKU_API_KEY={}", f"{r(HEX, 8)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 12)}"),
    ]
