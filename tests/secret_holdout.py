"""A second corpus of secret shapes that redaction was NOT tuned on: written before the detectors were
chosen and never used to change one. Its coverage is reported (`python -m bench.redaction.coverage`, docs/security.md's
Security section), and a test keeps it from falling below what was measured, but a miss here is a finding
to report, not a rule to add for this one value.

Values are generated (seeded), never real.
"""

from __future__ import annotations

import base64
import random
import string

from secret_corpus import Shape

_rng = random.Random(20261130)
LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"


def r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _shape(name: str, template: str, *secrets: str) -> Shape:
    return Shape(name, template.format(*secrets), secrets)


def holdout() -> list[Shape]:
    _rng.seed(20261130)  # the same values on every call
    uuid = f"{r(HEX, 8)}-{r(HEX, 4)}-4{r(HEX, 3)}-a{r(HEX, 3)}-{r(HEX, 12)}"
    return [
        _shape("Cloudflare API token", "CLOUDFLARE_API_TOKEN={} for dns edits", r(URLSAFE, 40)),
        _shape("Cloudflare origin CA key", "origin ca key {}", "v1.0-" + r(HEX, 24) + "-" + r(HEX, 146)),
        _shape("Twilio auth token", "twilio auth_token {} rotated", r(HEX, 32)),
        _shape("Mapbox secret token", "tiles upload with sk.eyJ1{}", r(URLSAFE, 60) + "." + r(URLSAFE, 22)),
        _shape("Square access token", "square payments with {}", "EAAA" + r(URLSAFE, 60)),
        _shape("Contentful PAT", "contentful cli token {}", "CFPAT-" + r(URLSAFE, 43)),
        _shape("Figma token", "figma export token {}", "figd_" + r(URLSAFE, 40)),
        _shape("Perplexity key", "pplx-{} hit 429", r(ALNUM, 48)),
        _shape("Anthropic admin key", "usage report with {}", "sk-ant-admin01-" + r(URLSAFE, 93) + "AA"),
        _shape("OpenRouter key", "router key {}", "sk-or-v1-" + r(HEX, 64)),
        _shape("xAI key", "grok call with {}", "xai-" + r(ALNUM, 80)),
        _shape("Netlify token", "netlify deploy --auth {}", "nfp_" + r(ALNUM, 36)),
        _shape("Render API key", "render deploy hook key {}", "rnd_" + r(ALNUM, 32)),
        _shape("Snyk token", "SNYK_TOKEN={} in CI", uuid),
        _shape("Buildkite agent token", "BUILDKITE_AGENT_TOKEN={}", r(HEX, 50)),
        _shape("CircleCI token", "circleci api token {}", "CCIPAT_" + r(ALNUM, 22) + "_" + r(HEX, 40)),
        _shape("Tailscale auth key", "tailscale up --authkey {}", "tskey-auth-" + r(ALNUM, 17) + "-" + r(ALNUM, 33)),
        _shape("Terraform Cloud token (bare)", "TFE token {} expired", r(ALNUM, 14) + ".atlasv1." + r(URLSAFE, 67)),
        _shape("Vault batch token", "batch token {}", "hvb." + r(URLSAFE, 120)),
        _shape("Confluent API secret", "kafka client secret {}", r(ALNUM + "+/", 64)),
        _shape("MongoDB Atlas private key", "atlas api private key {}", uuid),
        _shape(
            "Elastic API key header",
            "Authorization: ApiKey {}",
            base64.b64encode(f"{r(ALNUM, 20)}:{r(URLSAFE, 22)}".encode()).decode(),
        ),
        _shape("Digest-less basic in URL", "ftp://backup:{}@files.acme.io/dumps", r(ALNUM, 14)),
        _shape("SMB password flag", "mount -t cifs //nas/share /mnt -o username=ops,password={}", r(ALNUM, 12)),
        _shape("rsync password env", "RSYNC_PASSWORD={} rsync -a rsync://backup@nas/dumps .", r(ALNUM, 12)),
        _shape("ansible-vault password", "ansible-playbook site.yml --vault-password {}", r(ALNUM, 16)),
        _shape("psql connection URI in prose", "connect with postgresql://report:{}@10.2.0.14/analytics", r(ALNUM, 12)),
        _shape("SMTP password", "smtp_auth_password: {}", r(ALNUM, 16)),
        _shape("Java keystore password property", "-Djavax.net.ssl.keyStorePassword={} on the JVM", r(ALNUM, 14)),
        _shape("Spring datasource password", "spring.datasource.password={}", r(ALNUM, 16)),
        _shape("Rails master key", "RAILS_MASTER_KEY={}", r(HEX, 32)),
        _shape("Django secret key", "DJANGO_SECRET_KEY='{}'", r(ALNUM + "!@#%^&*(-_=+)", 50)),
        _shape("JWT signing secret", "JWT_SECRET={}", r(ALNUM, 32)),
        _shape("Encryption key hex", "ENCRYPTION_KEY={}", r(HEX, 64)),
        _shape(
            "WireGuard private key",
            "[Interface]\nPrivateKey = {}\nAddress = 10.8.0.2/32",
            base64.b64encode(_rng.randbytes(32)).decode(),
        ),
        _shape("Kubeconfig token", "users:\n- name: ci\n  user:\n    token: {}", r(URLSAFE, 40)),
        _shape("Kubeconfig client-key-data", "client-key-data: {}", base64.b64encode(_rng.randbytes(90)).decode()),
        _shape("Slack signing secret", "SLACK_SIGNING_SECRET={}", r(HEX, 32)),
        _shape("Sendinblue key", "brevo key {}", "xkeysib-" + r(HEX, 64) + "-" + r(ALNUM, 16)),
        _shape("LaunchDarkly SDK key", "ld sdk key {}", "sdk-" + uuid),
        _shape("Algolia admin key", "ALGOLIA_ADMIN_KEY={}", r(HEX, 32)),
        _shape(
            "Private key in one JSON line",
            '{{"key": "-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n"}}',
            r(B64, 64),
        ),
        _shape(
            "PGP private key block",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{}\n-----END PGP PRIVATE KEY BLOCK-----",
            r(B64, 64),
        ),
        _shape("URL-encoded bearer", "Authorization%3A%20Bearer%20{}", r(URLSAFE, 36)),
        _shape(
            "base64 of a JSON secret",
            "config blob {}",
            base64.b64encode(f'{{"client_secret": "{r(ALNUM, 24)}"}}'.encode()).decode(),
        ),
        _shape("secret in a Go struct literal", 'cfg := Config{{APIKey: "{}"}}', r(ALNUM, 32)),
        _shape("PowerShell credential", "ConvertTo-SecureString '{}' -AsPlainText -Force", r(ALNUM, 14)),
        _shape("Windows net use", "net use \\nas\\share /user:ops {}", r(ALNUM, 12)),
        _shape("git credential URL", "https://oauth2:{}@gitlab.acme.io/infra/deploy.git", r(URLSAFE, 20)),
        _shape("NuGet API key", "dotnet nuget push -k {}", "oy2" + r(LOWER + DIGITS, 43)),
        _shape(
            "token split by a soft hyphen",
            "token: {}\u00ad{}",
            "xoxb-" + r(DIGITS, 11),
            r(DIGITS, 12) + "-" + r(ALNUM, 24),
        ),
        _shape("Password in an Ansible inventory", "db1 ansible_host=10.0.0.9 ansible_password={}", r(ALNUM, 13)),
        _shape("Azure Function key", "https://fn-acme.azurewebsites.net/api/resize?code={}", r(URLSAFE, 54) + "=="),
        _shape("Firebase server key", "FCM legacy key {}", "AAAA" + r(URLSAFE, 7) + ":APA91b" + r(URLSAFE, 134)),
    ]
