"""A corpus of secret shapes as on-call people paste them: each a sentence holding one secret, and the
secret itself (what must never come out again). Values are generated (seeded), never real, and built
at test time so no secret-shaped literal sits in the repository.

The shapes follow the vendors' documented formats and the detector catalogue's own rule shapes (checksums
valid where the vendor has one: GitHub's and npm's CRC32), plus the password syntaxes of everyday tools.
This is the set redaction was tuned on; `secret_holdout.py` is the set it was not.
"""

from __future__ import annotations

import base64
import random
import string
import zlib
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


BASE62 = DIGITS + UPPER + LOWER
BASE32_LOWER = LOWER + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def crc_token(prefix: str, n: int = 30) -> str:
    """A GitHub- or npm-style token: `n` random base62 characters and their CRC32 in 6 base62 digits."""
    entropy = r(ALNUM, n)
    crc, digits = zlib.crc32(entropy.encode()), ""
    while crc:
        crc, d = divmod(crc, 62)
        digits = BASE62[d] + digits
    return prefix + entropy + digits.rjust(6, "0")


def _pem(kind: str) -> tuple[str, str]:
    body = "\n".join(r(B64, 64) for _ in range(4))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----", body.splitlines()[1]


def corpus() -> list[Shape]:
    _rng.seed(20261129)  # the same values on every call
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
        _shape(
            "Slack bot token", "bot posted with {}", "xoxb-" + r(DIGITS, 12) + "-" + r(DIGITS, 13) + "-" + r(ALNUM, 24)
        ),
        _shape(
            "Slack user token",
            "legacy {} in the cron",
            "xoxp-" + r(DIGITS, 12) + "-" + r(DIGITS, 12) + "-" + r(DIGITS, 13) + "-" + r(HEX, 32),
        ),
        _shape(
            "Slack webhook URL",
            "alerts go to https://hooks.slack.com/services/{}",
            "T" + r(UPPER + DIGITS, 8) + "/B" + r(UPPER + DIGITS, 10) + "/" + r(ALNUM, 24),
        ),
        _shape(
            "Slack app token",
            "socket mode app token {}",
            "xapp-1-A" + r(UPPER + DIGITS, 10) + "-" + r(DIGITS, 13) + "-" + r(HEX, 64),
        ),
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
        _shape(
            "Azure storage account key",
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net",
            r(B64, 86) + "==",
        ),
        _shape(
            "Azure SAS signature",
            "https://acme.blob.core.windows.net/dumps/heap.hprof?sv=2022-11-02&sr=b&sig={}&se=2026-12-01",
            r(ALNUM, 20) + "%2B" + r(ALNUM, 20) + "%3D",
        ),
        _shape(
            "Azure Service Bus key",
            "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={}",
            r(B64, 43) + "=",
        ),
        Shape(
            "Kubernetes Secret data",
            f"kubectl get secret db-creds -o yaml shows data:\n  password: {k8s_a}\n  username: {k8s_b}",
            (k8s_a, k8s_b),
        ),
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
        _shape(
            "Discord bot token",
            "discord bot {} disconnected",
            "M" + r(ALNUM, 23) + "." + r(URLSAFE, 6) + "." + r(URLSAFE, 27),
        ),
        _shape("Mailchimp key", "newsletter key {}", r(HEX, 32) + "-us12"),
        _shape("Telegram bot token", "bot {} was blocked", r(DIGITS, 10) + ":AA" + r(URLSAFE, 33)),
        _shape("DigitalOcean token", "doctl auth with {}", "dop_v1_" + r(HEX, 64)),
        _shape("Shopify token", "store admin token {}", "shpat_" + r(HEX, 32)),
        _shape("Docker config auth", '{{"auths": {{"registry.acme.io": {{"auth": "{}"}}}}}}', docker_auth),
        _shape("client secret", "oauth client_secret={} leaked in logs", r(URLSAFE, 34)),
        _shape("--password flag", "helm upgrade --install app --password={} ./chart", r(ALNUM, 16)),
        _shape("redis-cli -a", "redis-cli -h cache -a {} info", r(ALNUM, 20)),
        _shape(
            "Kafka SASL password",
            'sasl.jaas.config=PlainLoginModule required username="svc" password="{}";',
            r(ALNUM, 22),
        ),
        _shape("Heroku API key", "HEROKU_API_KEY={}", f"{r(HEX, 8)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 12)}"),
        *vendor_shapes(),
        *tool_shapes(),
    ]


def uuid4() -> str:
    return f"{r(HEX, 8)}-{r(HEX, 4)}-4{r(HEX, 3)}-{_rng.choice('89ab')}{r(HEX, 3)}-{r(HEX, 12)}"


def vendor_shapes() -> list[Shape]:
    """Tokens with a vendor's fixed prefix or layout, as the vendor documents them."""
    return [
        _shape("GitHub token with valid checksum", "actions runner cloned with {}", crc_token("ghp_")),
        _shape("GitHub app installation token", "installation token {} expired mid-deploy", crc_token("ghs_")),
        _shape("npm token with valid checksum", "npm publish failed: {} revoked", crc_token("npm_")),
        _shape("New Relic user API key", "newrelic-cli profiles add --apiKey {}", "NRAK-" + r(UPPER + DIGITS, 27)),
        _shape("New Relic bare user key", "NerdGraph said 401 for key {}", "NRAK-" + r(UPPER + DIGITS, 27)),
        _shape("New Relic insert key", "infra agent license NRII-{} rejected", r(URLSAFE, 32)),
        _shape("Databricks token", "databricks jobs list with {} returned 403", "dapi" + r(HEX, 32)),
        _shape("Postman API key", "the collection runner used {}", f"PMAK-{r(HEX, 24)}-{r(HEX, 34)}"),
        _shape("Pulumi access token", "pulumi login used {}", "pul-" + r(HEX, 40)),
        _shape("Sentry user auth token", "sentry-cli releases failed, token {}", "sntryu_" + r(HEX, 64)),
        _shape("Sentry org token", "SENTRY_AUTH_TOKEN {} in the build log", "sntrys_eyJ" + r(URLSAFE, 120)),
        _shape(
            "Azure AD client secret",
            "app registration secret {} expires tomorrow",
            r(ALNUM, 3) + "8Q~" + r(URLSAFE, 34),
        ),
        _shape("Azure DevOps PAT", "az devops login with PAT {}", r(BASE32_LOWER, 52)),
        _shape("age secret key", "sops decrypt needs {}", "AGE-SECRET-KEY-1" + r(BECH32, 58)),
        _shape("Hugging Face token", "model pull with {} hit the rate limit", "hf_" + r(LOWER + UPPER, 34)),
        _shape("Groq key", "LLM gateway key {} over quota", "gsk_" + r(ALNUM, 52)),
        _shape("Replicate token", "replicate predictions with {}", "r8_" + r(ALNUM, 37)),
        _shape("Docker Hub PAT", "docker login -u ci --password-stdin <<< {}", "dckr_pat_" + r(URLSAFE, 27)),
        _shape("Grafana service account token", "grafana api called with {}", f"glsa_{r(ALNUM, 32)}_{r(HEX, 8)}"),
        _shape("Grafana Cloud token", "grafana cloud stack token {}", "glc_" + r(ALNUM, 80) + "=="),
        _shape("Doppler service token", "doppler run with {}", "dp.st.prd." + r(ALNUM, 43)),
        _shape("Linear API key", "linear webhook used {}", "lin_api_" + r(ALNUM, 40)),
        _shape("Notion integration secret", "notion sync with {}", "ntn_" + r(DIGITS, 11) + r(ALNUM, 35)),
        _shape(
            "Atlassian API token",
            "jira automation token {}",
            "ATATT3xFfGF0" + r(URLSAFE, 170) + "=" + r(HEX, 8).upper(),
        ),
        _shape("Bitbucket app password", "bitbucket pipelines used {}", "ATBB" + r(ALNUM, 32)),
        _shape(
            "Dynatrace API token", "oneagent token {} denied", f"dt0c01.{r(UPPER + DIGITS, 24)}.{r(UPPER + DIGITS, 64)}"
        ),
        _shape("Heroku platform key", "heroku ps:scale with {}", "HRKU-AA" + r(URLSAFE, 58)),
        _shape("Supabase access token", "supabase db push with {}", "sbp_" + r(HEX, 40)),
        _shape("Vercel token", "vercel deploy token {}", "vcp_" + r(ALNUM, 56)),
        _shape("Fly.io token", "flyctl deploy with FlyV1 {}", "fm2_" + r(URLSAFE, 140)),
        _shape("RubyGems key", "gem push with {}", "rubygems_" + r(HEX, 48)),
        _shape("Stripe webhook secret", "signature check failed with whsec_{}", r(ALNUM, 32)),
        _shape("Mailgun key", "mailgun send with {}", "key-" + r(HEX, 32)),
        _shape("GCP OAuth client secret", "oauth2-proxy client secret {}", "GOCSPX-" + r(URLSAFE, 28)),
        _shape("Google OAuth access token", "gcloud auth print-access-token gave {}", "ya29." + r(URLSAFE, 150)),
        _shape("Okta API token", "Authorization: SSWS {}", "00" + r(URLSAFE, 40)),
        _shape("Opsgenie API key", "Authorization: GenieKey {}", uuid4()),
        _shape("Splunk HEC token", "curl -H 'Authorization: Splunk {}' https://hec.internal:8088", uuid4()),
        _shape(
            "Kubernetes bootstrap token",
            "kubeadm join 10.0.0.5:6443 --token {} --discovery-token-ca-cert-hash sha256:00",
            r(LOWER + DIGITS, 6) + "." + r(LOWER + DIGITS, 16),
        ),
        _shape(
            "Docker swarm join token",
            "docker swarm join --token {} 10.0.0.5:2377",
            "SWMTKN-1-" + r(LOWER + DIGITS, 50) + "-" + r(LOWER + DIGITS, 25),
        ),
        _shape("Alibaba access key", "aliyun cli key {} disabled", "LTAI" + r(ALNUM, 20)),
        _shape("Shopify shared secret", "webhook hmac secret {}", "shpss_" + r(HEX, 32)),
        _shape("PlanetScale token", "pscale connect with {}", "pscale_tkn_" + r(URLSAFE, 43)),
        _shape("Prefect API key", "PREFECT_API_KEY {} rejected by cloud", "pnu_" + r(ALNUM, 36)),
        _shape(
            "Discord webhook", "posted via https://discord.com/api/webhooks/" + r(DIGITS, 18) + "/{}", r(URLSAFE, 68)
        ),
        _shape(
            "Microsoft Teams webhook",
            "alerts to https://acme.webhook.office.com/webhookb2/{}",
            f"{uuid4()}@{uuid4()}/IncomingWebhook/{r(HEX, 32)}/{uuid4()}",
        ),
    ]


def tool_shapes() -> list[Shape]:
    """Passwords and keys in the syntaxes of everyday tools, signed URLs and encodings."""
    pw = r(ALNUM, 14)
    basic = base64.b64encode(f"svc-backup:{pw}".encode()).decode()
    wrapped = "ghp_" + r(ALNUM, 36)
    zw = "glpat-" + r(URLSAFE, 20)
    quoted = r(ALNUM, 10) + "+/=" + r(ALNUM, 6)
    return [
        _shape(".netrc entry", "~/.netrc had: machine artifacts.acme.io login deploy password {}", r(ALNUM, 16)),
        _shape(".pgpass line", "the cron's .pgpass: orders-db.internal:5432:orders:app:{}", r(ALNUM, 18)),
        _shape("curl -u", "curl -u admin:{} https://es.internal:9200/_cluster/health", r(ALNUM, 12)),
        _shape("curl --user", "curl --user 'ci:{}' -X POST https://jenkins.internal/job/x/build", r(ALNUM, 15)),
        _shape("sshpass -p", "sshpass -p '{}' ssh ops@bastion uptime", r(ALNUM, 12)),
        _shape("ldapsearch -w", "ldapsearch -x -D cn=admin,dc=acme,dc=io -w {} -b dc=acme,dc=io", r(ALNUM, 13)),
        _shape("DB_PASS env", "the job ran with DB_PASS={} DB_HOST=orders-db", r(ALNUM, 16)),
        _shape("MYSQL_PWD env", "MYSQL_PWD={} mysqldump orders > /tmp/o.sql", r(ALNUM, 14)),
        _shape("pass: in prose", "login for the console is user ops pass: {}", r(ALNUM, 12)),
        _shape("YAML password key", "values.yaml:\n  redis:\n    auth:\n      password: {}\n", r(ALNUM, 16)),
        _shape("JSON password field", '{{"user": "svc", "password": "{}", "host": "db"}}', r(ALNUM, 16)),
        _shape(
            "XML password element", "<datasource><user>app</user><password>{}</password></datasource>", r(ALNUM, 14)
        ),
        _shape(
            "JDBC query password",
            "jdbc:postgresql://db.internal:5432/orders?user=app&password={}&ssl=true",
            r(ALNUM, 15),
        ),
        _shape(
            "ADO.NET connection string",
            "Server=tcp:sql.acme.io,1433;Database=orders;User ID=app;Password={};Encrypt=True",
            r(ALNUM, 16),
        ),
        _shape("MongoDB SRV URI", "mongodb+srv://app:{}@cluster0.ab1cd.mongodb.net/orders refused", r(ALNUM, 16)),
        _shape("Redis URI without user", "REDIS_URL=redis://:{}@cache.internal:6379/0", r(ALNUM, 20)),
        _shape("docker login -p", "docker login -u ci -p {} registry.acme.io", r(ALNUM, 18)),
        _shape("openssl passin", "openssl pkcs12 -in cert.p12 -passin pass:{} -nodes", r(ALNUM, 12)),
        _shape("keytool storepass", "keytool -list -keystore app.jks -storepass {}", r(ALNUM, 12)),
        _shape("kubectl from-literal", "kubectl create secret generic db --from-literal=password={}", r(ALNUM, 16)),
        _shape("helm --set password", "helm upgrade api ./chart --set postgresql.auth.password={}", r(ALNUM, 16)),
        _shape("export TOKEN", "export VAULT_TOKEN={}", "hvs." + r(URLSAFE, 24)),
        _shape("X-API-Key header", "curl -H 'X-API-Key: {}' https://api.partner.io/v2/orders", r(ALNUM, 32)),
        _shape("Cookie header", "Cookie: session={}; path=/", r(URLSAFE, 40)),
        _shape(
            "S3 presigned URL",
            "heap dump at https://dumps.s3.amazonaws.com/h.hprof?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Credential=AKIA{}%2F20261130%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature={}",
            r(UPPER + "234567", 16),
            r(HEX, 64),
        ),
        _shape(
            "GCS signed URL",
            "https://storage.googleapis.com/logs/x.gz?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature={}",
            r(HEX, 256),
        ),
        _shape("access_token query", "GET /api/v1/export?access_token={}&format=csv 500", r(URLSAFE, 40)),
        _shape(
            "URL-encoded password",
            "callback=https%3A%2F%2Fx%3Fpassword%3D{}%26u%3Dops",
            quoted.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
        ),
        _shape("base64 of user:password", "the header was {} (base64)", basic),
        _shape("token split over a line", "pasted from a narrow terminal: {}\n{}", wrapped[:20], wrapped[20:]),
        _shape("token with a zero-width space", "from the chat: {}\u200b{}", zw[:12], zw[12:]),
        _shape("PGPASSWORD in a URL param", "psql 'host=db.internal dbname=orders user=app password={}'", r(ALNUM, 15)),
        _shape("htpasswd-style basic secret", "nginx auth_basic user ops password {} in the configmap", r(ALNUM, 14)),
    ]
