"""Vendor token shapes by their documented prefixes. The catalogue (`catalogue.py`) finds many of these
too, but only next to the vendor's name (`newrelic ... = NRAK-...`) or between the delimiters a config file
has (a Pulumi token followed by `&` in a query string is not one to it): an on-call note pastes the bare
token anywhere. Each prefix is fixed by its vendor, so these hold without context.
"""

from __future__ import annotations

from .base import pattern

VENDORS = [
    pattern(
        "AWS access key id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b",
        keywords=("akia", "asia", "abia", "acca", "a3t"),
    ),
    pattern(
        "AWS session token",
        r"\b(?:FwoGZXIvYXdzE|IQoJb3JpZ2luX2Vj|IQoJb3JpZ2luX)[A-Za-z0-9+/=]{40,}",
        keywords=("fwogzxivyxdze", "iqojb3jpz2lux"),
    ),
    pattern("Google OAuth client secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}", keywords=("gocspx-",)),
    pattern("Google OAuth access token", r"\bya29\.[A-Za-z0-9_-]{30,}", keywords=("ya29.",)),
    pattern(
        "OpenAI / Anthropic key",
        r"\bsk-(?:proj-|ant-(?:api|admin)\d\d-|svcacct-|None-|or-v1-)?[A-Za-z0-9_-]{20,}",
        keywords=("sk-",),
    ),
    pattern("Vault token", r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}", keywords=("hvs.", "hvb.", "hvr.")),
    pattern("Google API key", r"\bAIza[0-9A-Za-z_-]{35}", keywords=("aiza",)),
    pattern("Stripe key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", keywords=("_live_", "_test_")),
    pattern(
        "GitHub token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
        keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    pattern(
        "GitLab token",
        r"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|oas|agent)-[A-Za-z0-9_.-]{20,}",
        keywords=("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "gloas-", "glagent-"),
    ),
    pattern(
        "Slack webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+",
        keywords=("hooks.slack.com",),
    ),
    pattern(
        "Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", keywords=("shpat_", "shpca_", "shppa_", "shpss_")
    ),
    pattern("SendGrid key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", keywords=("sg.",)),
    pattern("Twilio key", r"\bSK[0-9a-fA-F]{32}\b", keywords=("sk",)),
    pattern("Databricks token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", keywords=("dapi",)),
    pattern("Pulumi token", r"\bpul-[a-f0-9]{40}\b", keywords=("pul-",)),
    pattern("Sentry token", r"\bsntry[us]_[A-Za-z0-9_=+/.-]{40,}", keywords=("sntryu_", "sntrys_")),
    pattern("Linear key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", keywords=("lin_api_", "lin_oauth_")),
    pattern("Notion token", r"\bntn_[A-Za-z0-9]{40,}", keywords=("ntn_",)),
    pattern("Atlassian API token", r"\bATATT3[A-Za-z0-9_=-]{150,}", keywords=("atatt3",)),
    pattern("Dynatrace token", r"\bdt0[a-z]\d{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b", keywords=("dt0",)),
    pattern("Heroku key", r"\bHRKU-[A-Za-z0-9_-]{40,}", keywords=("hrku-",)),
    pattern("Supabase token", r"\bsbp_[a-f0-9]{40}\b", keywords=("sbp_",)),
    pattern("Vercel token", r"\bvc[paicrk]_[A-Za-z0-9]{40,}", keywords=("vcp_", "vca_", "vci_", "vcr_", "vck_")),
    pattern("Fly.io token", r"\bfm[12][ar]?_[A-Za-z0-9_+/=-]{40,}", keywords=("fm1", "fm2")),
    pattern("RubyGems key", r"\brubygems_[a-f0-9]{48}\b", keywords=("rubygems_",)),
    pattern("Docker swarm token", r"\bSWMTKN-1-[a-z0-9]{50}-[a-z0-9]{25}\b", keywords=("swmtkn-",)),
    pattern("Alibaba access key", r"\bLTAI[A-Za-z0-9]{16,24}\b", keywords=("ltai",)),
    pattern("Prefect API key", r"\bpn[ub]_[A-Za-z0-9]{36}\b", keywords=("pnu_", "pnb_")),
    pattern("Hugging Face token", r"\bhf_[A-Za-z]{34}\b", keywords=("hf_",)),
    pattern("Groq key", r"\bgsk_[A-Za-z0-9]{52}\b", keywords=("gsk_",)),
    pattern("Replicate token", r"\br8_[A-Za-z0-9]{37}\b", keywords=("r8_",)),
    pattern("Docker Hub token", r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}", keywords=("dckr_",)),
    pattern(
        "Grafana token",
        r"\bglsa_[A-Za-z0-9]{32}_[a-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}",
        keywords=("glsa_", "glc_"),
    ),
    pattern("PyPI token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", keywords=("pypi-",)),
    # Legacy and configuration tokens the catalogue matches only at their documented lengths.
    pattern("Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}", keywords=("xox", "xapp-")),
    pattern("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", keywords=("eyj",)),
    pattern("Stripe webhook secret", r"\bwhsec_[A-Za-z0-9]{24,}", keywords=("whsec_",)),
    pattern(
        "Microsoft Teams webhook",
        # The tenant's hook host, and Office 365's older shared one (`outlook.office.com/webhook/…`).
        r"(?:\.webhook\.office\.com|\boutlook\.office(?:365)?\.com)/webhook(?:b2)?/(?P<s>[^\s\"'<>]+)",
        group="s",
        keywords=("webhook.office.com", "outlook.office"),
    ),
    pattern(
        "Discord webhook",
        r"discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_-]{40,})",
        group="s",
        keywords=("/api/webhooks/",),
    ),
    pattern("Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", keywords=("atlasv1",)),
    pattern(
        "New Relic key",
        r"\bNR(?:AK|II|JS|AA|RA)-[A-Za-z0-9_-]{20,}",
        keywords=("nrak-", "nrii-", "nrjs-", "nraa-", "nrra-"),
    ),
    pattern(
        "Azure AD client secret",
        r"(?:^|[^A-Za-z0-9_~.-])(?P<s>[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})",
        group="s",
        keywords=("q~",),
    ),
    pattern("Doppler token", r"\bdp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9._-]{40,}", keywords=("dp.",)),
    pattern("Bitbucket app password", r"\bATBB[A-Za-z0-9]{32}", keywords=("atbb",)),
    pattern("Mailgun key", r"\bkey-[a-f0-9]{32}\b", keywords=("key-",)),
    pattern("Mailchimp key", r"\b[a-f0-9]{32}-us\d{1,2}\b", keywords=("-us",)),
    pattern("Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", keywords=(":aa",)),
    pattern(
        "Discord bot token", r"\b[MN][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b", keywords=(".",)
    ),
    pattern("PlanetScale token", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,}", keywords=("pscale_",)),
]
