"""A broad corpus of secret formats, shaped after what public secret scanners cover.

The families follow the rule sets of gitleaks (about 200 provider rules) and
detect-secrets' plugins: provider token formats, private keys (PEM and
base64-wrapped), secret-named name/value pairs in every common syntax, signed
URLs, and credential-bearing headers.  Each format is written the way it
shows up in a terminal, a config file or a pasted message.

Every secret is assembled at run time from a seeded random source (none is
real, and no whole token is written in this file, so push-protection
scanners have nothing to match); where a format's alphabet allows, the
random part carries ``FAKE``.
"""

# ruff: noqa: E501
# (a corpus: lines as they appear in terminals and files)

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
LOWER = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


@dataclass(frozen=True)
class SecretFormat:
    family: str
    name: str
    line: str  # the secret in that format's usual notation
    secret: str
    public: bool = False  # an identifier scanners flag but that grants nothing (client ids): not required


def _pem(kind: str, body: str) -> str:
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----"


def secret_formats(seed: int = 20261127) -> list[SecretFormat]:
    rng = random.Random(seed)

    def r(n: int, chars: str = ALNUM) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    def fake(n: int, chars: str = ALNUM) -> str:
        return "FAKE" + r(n - 4, chars)

    def uuid() -> str:
        return "-".join(r(k, HEX) for k in (8, 4, 4, 4, 12))

    def pw() -> str:
        return "FAKEpw" + r(12)

    items: list[SecretFormat] = []

    def add(family: str, name: str, template: str, secret: str, public: bool = False) -> None:
        items.append(SecretFormat(family, name, template.replace("{S}", secret), secret, public))

    # -- AI and ML providers --
    ai = "ai-providers"
    add(ai, "openai-project", "OPENAI_API_KEY={S}", "sk-proj-" + fake(74, URLSAFE) + "T3Blbk" + "FJ" + r(74, URLSAFE))
    add(ai, "openai-legacy", "key {S}", "sk-" + fake(20) + "T3Blbk" + "FJ" + r(20))
    add(ai, "openai-svcacct", "{S}", "sk-svcacct-" + fake(58, URLSAFE) + "T3Blbk" + "FJ" + r(58, URLSAFE))
    add(ai, "openai-admin", "admin key {S}", "sk-admin-" + fake(58, URLSAFE) + "T3Blbk" + "FJ" + r(58, URLSAFE))
    add(ai, "anthropic-api", "export ANTHROPIC_API_KEY={S}", "sk-ant-api03-" + fake(93, URLSAFE) + "AA")
    add(ai, "anthropic-admin", "admin: {S}", "sk-ant-admin01-" + fake(93, URLSAFE) + "AA")
    add(ai, "openrouter", "OPENROUTER_API_KEY={S}", "sk-or-v1-" + r(64, HEX))
    add(ai, "deepseek", "DEEPSEEK_API_KEY={S}", "sk-" + r(32, HEX))
    add(ai, "huggingface", "huggingface-cli login --token {S}", "hf_" + fake(34, string.ascii_letters))
    add(ai, "huggingface-org", "{S}", "api_org_" + fake(34, string.ascii_letters))
    add(ai, "perplexity", "{S}", "pplx-" + fake(48))
    add(ai, "groq", "GROQ_API_KEY={S}", "gsk_" + fake(52))
    add(ai, "xai", "{S}", "xai-" + fake(80))
    add(ai, "replicate", "REPLICATE_API_TOKEN={S}", "r8_" + fake(37))
    add(ai, "cohere", "CO_API_KEY={S}", fake(40))
    add(ai, "mistral", "MISTRAL_API_KEY={S}", fake(32))
    add(ai, "together", "TOGETHER_API_KEY={S}", r(64, HEX))
    add(ai, "gemini", "GEMINI_API_KEY={S}", "AIza" + fake(35, URLSAFE))
    add(ai, "elevenlabs", "xi-api-key: {S}", "sk_" + r(48, HEX))
    add(ai, "langsmith", "LANGSMITH_API_KEY={S}", "lsv2_pt_" + r(32, HEX) + "_" + r(10, HEX))
    add(ai, "pinecone", "PINECONE_API_KEY={S}", "pcsk_" + fake(6) + "_" + r(60, URLSAFE))
    add(ai, "bedrock-long-lived", "AWS_BEARER_TOKEN_BEDROCK={S}", "ABSK" + fake(120, B64))
    add(ai, "fireworks", "{S}", "fw_" + fake(30))
    add(ai, "tavily", "{S}", "tvly-" + fake(32))
    add(ai, "wandb", "WANDB_API_KEY={S}", r(40, HEX))

    # -- code hosting, registries, CI and developer tools --
    dev = "dev-tools"
    add(dev, "github-pat", "git push https://x:{S}@github.com/o/r", "ghp_" + fake(36))
    add(dev, "github-oauth", "{S}", "gho_" + fake(36))
    add(dev, "github-app-user", "{S}", "ghu_" + fake(36))
    add(dev, "github-app-server", "GH_TOKEN={S}", "ghs_" + fake(36))
    add(dev, "github-refresh", "{S}", "ghr_" + fake(36))
    add(dev, "github-fine-grained", "{S}", "github_pat_" + fake(22) + "_" + r(59))
    add(dev, "gitlab-pat", "{S}", "glpat-" + fake(20, URLSAFE))
    add(dev, "gitlab-pat-routable", "{S}", "glpat-" + fake(27, URLSAFE) + "." + r(2, LOWER) + r(7, LOWER))
    add(dev, "gitlab-pipeline-trigger", "{S}", "glptt-" + r(40, HEX))
    add(dev, "gitlab-deploy", "{S}", "gldt-" + fake(20))
    add(dev, "gitlab-runner", "{S}", "glrt-" + fake(20))
    add(dev, "gitlab-runner-routable", "{S}", "glrt-t1_" + fake(27) + "." + r(9, LOWER))
    add(dev, "gitlab-ci-job", "{S}", "glcbt-" + r(3) + "_" + fake(20))
    add(dev, "gitlab-feed", "{S}", "glft-" + fake(20))
    add(dev, "gitlab-incoming-mail", "{S}", "glimt-" + fake(25))
    add(dev, "gitlab-agent", "{S}", "glagent-" + fake(50))
    add(dev, "gitlab-oauth-secret", "{S}", "gloas-" + fake(64))
    add(dev, "gitlab-scim", "{S}", "glsoat-" + fake(20))
    add(dev, "gitlab-feature-flag", "{S}", "glffct-" + fake(20))
    add(dev, "gitlab-runner-registration", "{S}", "GR1348941" + fake(20))
    add(dev, "gitlab-session-cookie", "curl -b _gitlab_session={S} https://gitlab.internal", r(32, LOWER))
    add(dev, "bitbucket-client-secret", "BITBUCKET_CLIENT_SECRET={S}", fake(64, URLSAFE))
    add(dev, "atlassian", "JIRA_API_TOKEN={S}", "ATATT3" + fake(186, URLSAFE))
    add(dev, "circleci", "CIRCLECI_TOKEN={S}", "CCIPAT_" + fake(22) + "_" + r(40, HEX))
    add(dev, "travis", "TRAVIS_API_TOKEN={S}", fake(22))
    add(dev, "codecov", "CODECOV_TOKEN={S}", uuid())
    add(dev, "sonarqube", "sonar.token={S}", "squ_" + r(40, HEX))
    add(dev, "snyk", "SNYK_TOKEN={S}", uuid())
    add(dev, "npm", "//registry.npmjs.org/:_authToken={S}", "npm_" + fake(36))
    add(dev, "pypi", "TWINE_PASSWORD={S}", "pypi-AgEIcHlwaS5vcmc" + fake(70, URLSAFE))
    add(dev, "rubygems", "GEM_HOST_API_KEY={S}", "rubygems_" + r(48, HEX))
    add(dev, "clojars", "{S}", "CLOJARS_" + r(60, LOWER))
    add(dev, "nuget", "dotnet nuget push x.nupkg --api-key {S}", "oy2" + r(43, LOWER))
    add(dev, "docker-hub", "echo {S} | docker login -u me --password-stdin", "dckr_pat_" + fake(27, URLSAFE))
    add(dev, "artifactory-api-key", "{S}", "AKCp" + fake(69))
    add(dev, "artifactory-reference", "{S}", "cmVmd" + fake(59))
    add(dev, "readme", "{S}", "rdme_" + r(70, LOWER))
    add(dev, "postman", "{S}", "PMAK-" + r(24, HEX) + "-" + r(34, HEX))
    add(dev, "terraform-cloud", "token = {S}", r(14, LOWER) + ".atlasv1." + fake(67, URLSAFE))
    add(dev, "pulumi", "PULUMI_ACCESS_TOKEN={S}", "pul-" + r(40, HEX))
    add(dev, "doppler", "{S}", "dp.pt." + fake(43))
    add(dev, "vault-service", "VAULT_TOKEN={S}", "hvs." + fake(95, URLSAFE))
    add(dev, "vault-batch", "{S}", "hvb." + fake(140, URLSAFE))
    add(dev, "vault-legacy", "vault token s.{S}", fake(24))
    add(dev, "sourcegraph", "{S}", "sgp_" + r(16, HEX) + "_" + r(40, HEX))
    add(dev, "prefect", "{S}", "pnu_" + fake(36))
    add(dev, "infracost", "{S}", "ico-" + fake(32))
    add(dev, "scalingo", "{S}", "tk-us-" + fake(48, URLSAFE))
    add(dev, "octopus-deploy", "{S}", "API-" + r(26, UPPER))
    add(dev, "flyio", "FLY_API_TOKEN={S}", "fo1_" + fake(43, URLSAFE))
    add(dev, "flyio-macaroon", "{S}", "fm2_" + fake(120, B64))
    add(dev, "netlify", "NETLIFY_AUTH_TOKEN={S}", "nfp_" + fake(36))
    add(dev, "heroku-v2", "{S}", "HRKU-AA" + fake(58, URLSAFE))
    add(dev, "heroku-uuid", "HEROKU_API_KEY={S}", uuid())
    add(dev, "vercel", "VERCEL_TOKEN={S}", fake(24))
    add(dev, "databricks", "{S}", "dapi" + r(32, HEX))
    add(dev, "grafana-cloud", "{S}", "glc_" + fake(48, B64))
    add(dev, "grafana-service-account", "{S}", "glsa_" + fake(32) + "_" + r(8, HEX))
    add(dev, "grafana-api-key", "{S}", "eyJrIjoi" + fake(72))
    add(dev, "sentry-user", "{S}", "sntryu_" + r(64, HEX))
    add(dev, "sentry-org", "SENTRY_AUTH_TOKEN={S}", "sntrys_eyJpYXQiO" + fake(60, B64) + "_" + r(43, B64))
    add(dev, "dynatrace", "{S}", "dt0c01." + r(24, UPPER) + "." + r(64, UPPER))
    add(dev, "newrelic-user", "{S}", "NRAK-" + r(27, UPPER))
    add(dev, "newrelic-insert", "{S}", "NRII-" + fake(32, URLSAFE))
    add(dev, "newrelic-license", "NEW_RELIC_LICENSE_KEY={S}", r(36, HEX) + "NRAL")
    add(dev, "datadog", "DD_API_KEY={S}", r(32, HEX))
    add(dev, "datadog-app", "DD_APP_KEY={S}", r(40, HEX))
    add(dev, "clickhouse", "{S}", "4b1d" + fake(38))
    add(dev, "linear", "{S}", "lin_api_" + fake(40))
    add(dev, "notion", "{S}", "ntn_" + r(11, string.digits) + fake(35))
    add(dev, "notion-legacy", "NOTION_TOKEN={S}", "secret_" + fake(43))
    add(dev, "airtable-pat", "{S}", "pat" + fake(14) + "." + r(64, HEX))
    add(dev, "typeform", "{S}", "tfp_" + fake(59, URLSAFE))
    add(dev, "frameio", "{S}", "fio-u-" + fake(64, URLSAFE))
    add(dev, "figma", "X-Figma-Token: {S}", "figd_" + fake(40, URLSAFE))
    add(dev, "age-secret-key", "# created: 2026-01-01\n{S}", "AGE-SECRET-KEY-1" + r(58, BECH32))
    add(dev, "1password-service-account", "OP_SERVICE_ACCOUNT_TOKEN={S}", "ops_eyJ" + fake(260, B64))
    add(
        dev,
        "1password-secret-key",
        "Secret Key: {S}",
        "A3-" + r(6, UPPER) + "-" + r(11, UPPER) + "-" + "-".join(r(5, UPPER) for _ in range(3)),
    )
    add(dev, "planetscale-token", "{S}", "pscale_tkn_" + fake(43, URLSAFE))
    add(dev, "planetscale-password", "{S}", "pscale_pw_" + fake(43, URLSAFE))
    add(dev, "openshift", "oc login --token={S}", "sha256~" + fake(43, URLSAFE))
    add(dev, "maxmind", "{S}", r(6) + "_" + fake(29) + "_mmk")
    add(dev, "settlemint", "{S}", "sm_pat_" + fake(16))
    add(dev, "intra42", "{S}", "s-s4t2ud-" + r(64, HEX))
    add(dev, "discord-client-id", "DISCORD_CLIENT_ID={S}", r(18, string.digits), public=True)

    # -- cloud platforms --
    cloud = "cloud"
    add(cloud, "aws-access-key-id", "aws_access_key_id = {S}", "AKIA" + r(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
    add(cloud, "aws-temporary-key-id", "{S}", "ASIA" + r(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
    add(cloud, "aws-secret-key", "aws_secret_access_key = {S}", r(40, B64))
    add(cloud, "aws-session-token", "AWS_SESSION_TOKEN={S}", "IQoJb3JpZ2luX2Vj" + fake(300, B64))
    add(cloud, "aws-cli-secret", "aws configure set aws_secret_access_key {S}", r(40, B64))
    add(cloud, "gcp-api-key", "{S}", "AIza" + fake(35, URLSAFE))
    add(cloud, "gcp-oauth-access", "{S}", "ya29." + fake(120, URLSAFE))
    add(cloud, "google-oauth-client-secret", "client_secret={S}", "GOCSPX-" + fake(28, URLSAFE))
    add(cloud, "google-oauth-client-secret-bare", "pasted from the console: {S}", "GOCSPX-" + fake(28, URLSAFE))
    add(cloud, "google-refresh-token", "{S}", "1//0" + fake(100, URLSAFE))
    add(cloud, "azure-ad-client-secret", "AZURE_CLIENT_SECRET={S}", r(3) + "8Q~" + fake(34, URLSAFE + "~."))
    add(cloud, "azure-ad-client-secret-bare", "secret value {S}", r(3) + "8Q~" + fake(34, URLSAFE + "~."))
    add(
        cloud,
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=fake;AccountKey={S};EndpointSuffix=core.windows.net",
        r(86, B64) + "==",
    )
    add(cloud, "azure-devops-pat", "AZURE_DEVOPS_EXT_PAT={S}", r(52, LOWER))
    add(cloud, "alibaba-access-key-id", "{S}", "LTAI" + fake(20))
    add(cloud, "alibaba-secret", "ALIBABA_CLOUD_ACCESS_KEY_SECRET={S}", fake(30))
    add(cloud, "digitalocean-pat", "{S}", "dop_v1_" + r(64, HEX))
    add(cloud, "digitalocean-oauth", "{S}", "doo_v1_" + r(64, HEX))
    add(cloud, "digitalocean-refresh", "{S}", "dor_v1_" + r(64, HEX))
    add(cloud, "cloudflare-api-token", "CLOUDFLARE_API_TOKEN={S}", fake(40, URLSAFE))
    add(cloud, "cloudflare-global-key", "CF_API_KEY={S}", r(37, HEX))
    add(cloud, "cloudflare-origin-ca", "{S}", "v1.0-" + r(24, HEX) + "-" + r(146, HEX))
    add(cloud, "yandex-api-key", "{S}", "AQVN" + fake(36, URLSAFE))
    add(cloud, "yandex-iam", "{S}", "t1." + fake(20, URLSAFE) + "." + r(86, URLSAFE))
    add(cloud, "ibm-cloud-iam", "IBM_CLOUD_API_KEY={S}", fake(44, URLSAFE))
    add(cloud, "linode", "LINODE_TOKEN={S}", r(64, HEX))
    add(cloud, "hetzner", "HCLOUD_TOKEN={S}", fake(64))
    add(cloud, "scaleway", "SCW_SECRET_KEY={S}", uuid())
    add(
        cloud,
        "k8s-service-account-token",
        "kubectl --token={S} get pods",
        "eyJhbGciOiJSUzI1NiIsImtpZCI6IkZBS0UifQ.eyJpc3MiOiJrdWJlcm5ldGVzIn0." + r(342, URLSAFE),
    )

    # -- payments and commerce --
    pay = "payments"
    add(pay, "stripe-secret-live", "{S}", "sk_live_" + fake(99))
    add(pay, "stripe-secret-test", "{S}", "sk_test_" + fake(99))
    add(pay, "stripe-restricted", "{S}", "rk_live_" + fake(99))
    add(pay, "stripe-webhook", "STRIPE_WEBHOOK_SECRET={S}", "whsec_" + fake(32))
    add(pay, "square-access", "{S}", "sq0atp-" + fake(22, URLSAFE))
    add(pay, "square-oauth-secret", "{S}", "sq0csp-" + fake(43, URLSAFE))
    add(pay, "square-access-v2", "SQUARE_ACCESS_TOKEN={S}", "EAAA" + fake(60, URLSAFE))
    add(pay, "shopify-access", "{S}", "shpat_" + r(32, HEX))
    add(pay, "shopify-custom", "{S}", "shpca_" + r(32, HEX))
    add(pay, "shopify-private-app", "{S}", "shppa_" + r(32, HEX))
    add(pay, "shopify-shared-secret", "{S}", "shpss_" + r(32, HEX))
    add(pay, "braintree", "{S}", "access_token$production$" + r(16, LOWER) + "$" + r(32, HEX))
    add(pay, "flutterwave", "{S}", "FLWSECK_TEST-" + r(32, HEX) + "-X")
    add(pay, "duffel", "{S}", "duffel_live_" + fake(43, URLSAFE))
    add(pay, "shippo", "{S}", "shippo_live_" + r(40, HEX))
    add(pay, "easypost", "{S}", "EZAK" + fake(54))
    add(pay, "coinbase", "COINBASE_API_SECRET={S}", fake(64, URLSAFE))
    add(pay, "kraken", "KRAKEN_PRIVATE_KEY={S}", fake(88, B64))
    add(pay, "kucoin", "KUCOIN_API_SECRET={S}", uuid())
    add(pay, "plaid-access", "{S}", "access-production-" + uuid())
    add(pay, "plaid-secret", "PLAID_SECRET={S}", r(30, LOWER))
    add(pay, "gocardless", "GOCARDLESS_ACCESS_TOKEN={S}", "live_" + fake(40, URLSAFE))
    add(pay, "lob", "LOB_API_KEY={S}", "live_" + r(35, HEX))
    add(pay, "paypal-client-secret", "PAYPAL_CLIENT_SECRET={S}", "E" + fake(79, URLSAFE))

    # -- messaging, social and SaaS --
    msg = "messaging"
    add(msg, "slack-bot", "{S}", "xoxb-" + r(12, string.digits) + "-" + r(13, string.digits) + "-" + fake(24))
    add(msg, "slack-user", "{S}", "xoxp-" + "-".join(r(12, string.digits) for _ in range(3)) + "-" + r(32, HEX))
    add(msg, "slack-workspace", "{S}", "xoxa-2-" + fake(40))
    add(msg, "slack-refresh", "{S}", "xoxe-1-" + r(146, UPPER))
    add(msg, "slack-config", "{S}", "xoxe.xoxp-1-" + r(164, UPPER))
    add(msg, "slack-app", "{S}", "xapp-1-A" + r(10, UPPER) + "-" + r(13, string.digits) + "-" + r(64, HEX))
    add(
        msg,
        "slack-webhook",
        "curl -X POST https://hooks.slack.com/services/{S}",
        "T" + r(10, UPPER) + "/B" + r(10, UPPER) + "/" + fake(24),
    )
    add(msg, "discord-bot", "DISCORD_TOKEN={S}", "MT" + fake(24) + "." + r(6, URLSAFE) + "." + r(38, URLSAFE))
    add(msg, "discord-bot-bare", "client.run('{S}')", "MT" + fake(24) + "." + r(6, URLSAFE) + "." + r(27, URLSAFE))
    add(
        msg,
        "discord-bot-header",
        "Authorization: Bot {S}",
        "Nz" + fake(24) + "." + r(6, URLSAFE) + "." + r(27, URLSAFE),
    )
    add(msg, "discord-webhook", "https://discord.com/api/webhooks/" + r(18, string.digits) + "/{S}", fake(68, URLSAFE))
    add(msg, "discord-client-secret", "DISCORD_CLIENT_SECRET={S}", fake(32, URLSAFE))
    add(msg, "telegram-bot", "TELEGRAM_BOT_TOKEN={S}", r(10, string.digits) + ":AA" + fake(33, URLSAFE))
    add(msg, "twilio-account-sid-token", "TWILIO_AUTH_TOKEN={S}", r(32, HEX))
    add(msg, "twilio-api-key", "{S}", "SK" + r(32, HEX))
    add(msg, "sendgrid", "{S}", "SG." + fake(22, URLSAFE) + "." + r(43, URLSAFE))
    add(msg, "mailgun", "MAILGUN_API_KEY={S}", "key-" + r(32, HEX))
    add(msg, "mailgun-signing", "MAILGUN_WEBHOOK_SIGNING_KEY={S}", r(32, HEX) + "-" + r(8, HEX) + "-" + r(8, HEX))
    add(msg, "mailchimp", "MAILCHIMP_API_KEY={S}", r(32, HEX) + "-us21")
    add(msg, "brevo", "{S}", "xkeysib-" + r(64, HEX) + "-" + fake(16))
    add(msg, "postmark", "POSTMARK_SERVER_TOKEN={S}", uuid())
    add(msg, "messagebird", "MESSAGEBIRD_ACCESS_KEY={S}", fake(25))
    add(msg, "mattermost", "MATTERMOST_TOKEN={S}", r(26, LOWER))
    add(
        msg,
        "teams-webhook",
        "https://fake.webhook.office.com/webhookb2/{S}",
        uuid() + "@" + uuid() + "/IncomingWebhook/" + r(32, HEX) + "/" + uuid(),
    )
    add(msg, "intercom", "INTERCOM_ACCESS_TOKEN={S}", "dG9rOj" + fake(54, URLSAFE))
    add(msg, "zendesk", "ZENDESK_API_TOKEN={S}", fake(40))
    add(msg, "twitter-bearer", "TWITTER_BEARER_TOKEN={S}", "A" * 22 + fake(90))
    add(msg, "twitter-secret", "TWITTER_CONSUMER_SECRET={S}", fake(50))
    add(msg, "facebook-page", "{S}", "EAAC" + fake(120))
    add(msg, "facebook-app-secret", "FACEBOOK_APP_SECRET={S}", r(32, HEX))
    add(msg, "twitch", "TWITCH_CLIENT_SECRET={S}", r(30, LOWER))
    add(msg, "mapbox-secret", "{S}", "sk.eyJ1Ijoi" + fake(50, URLSAFE) + "." + r(22, URLSAFE))
    add(msg, "algolia-admin", "ALGOLIA_ADMIN_KEY={S}", r(32, HEX))
    add(msg, "contentful", "CONTENTFUL_DELIVERY_TOKEN={S}", fake(43, URLSAFE))
    add(msg, "launchdarkly", "LAUNCHDARKLY_SDK_KEY={S}", "sdk-" + uuid())
    add(msg, "hubspot", "HUBSPOT_ACCESS_TOKEN={S}", "pat-na1-" + uuid())
    add(
        msg,
        "asana",
        "ASANA_ACCESS_TOKEN={S}",
        "2/" + r(16, string.digits) + "/" + r(16, string.digits) + ":" + r(32, HEX),
    )
    add(msg, "dropbox", "DROPBOX_ACCESS_TOKEN={S}", "sl." + fake(135, URLSAFE))
    add(msg, "okta", "OKTA_API_TOKEN={S}", "00" + fake(40, URLSAFE))
    add(msg, "finnhub", "FINNHUB_API_KEY={S}", fake(20, LOWER))
    add(msg, "nytimes", "NYTIMES_API_KEY={S}", fake(32))
    add(msg, "rapidapi", "X-RapidAPI-Key: {S}", fake(50, URLSAFE))

    # -- private keys --
    keys = "private-keys"
    body = "MIIEv" + fake(900, B64)
    add(keys, "pem-rsa", "{S}", _pem("RSA PRIVATE KEY", body))
    add(keys, "pem-pkcs8", "{S}", _pem("PRIVATE KEY", "MIIEv" + fake(900, B64)))
    add(keys, "pem-ec", "{S}", _pem("EC PRIVATE KEY", "MHcC" + fake(160, B64)))
    add(keys, "pem-encrypted", "{S}", _pem("ENCRYPTED PRIVATE KEY", "MIIFH" + fake(1200, B64)))
    add(keys, "openssh", "{S}", _pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAA" + fake(300, B64)))
    add(keys, "pgp", "{S}", _pem("PGP PRIVATE KEY BLOCK", "lQOYBG" + fake(600, B64)))
    add(keys, "pem-crlf", "{S}", _pem("PRIVATE KEY", "MIIEv" + fake(300, B64)).replace("\n", "\r\n"))
    add(
        keys, "pem-yaml-block", "tls.key: |\n  {S}", _pem("PRIVATE KEY", "MIIEv" + fake(300, B64)).replace("\n", "\n  ")
    )
    add(
        keys,
        "pem-json-escaped",
        '{"type": "service_account", "private_key": "{S}"}',
        _pem("PRIVATE KEY", "MIIEv" + fake(300, B64)).replace("\n", "\\n"),
    )
    add(keys, "pem-in-prose-escaped", "key = '{S}'", _pem("PRIVATE KEY", "MIIEv" + fake(300, B64)).replace("\n", "\\n"))
    add(
        keys,
        "pem-truncated",
        "$ head -c 400 server.key\n{S}",
        _pem("PRIVATE KEY", "MIIEv" + fake(300, B64)).rsplit("\n", 2)[0],
    )
    for label, kind in (("k8s-secret-tls-key", "RSA PRIVATE KEY"), ("k8s-secret-pkcs8", "PRIVATE KEY")):
        pem = _pem(kind, "MIIEv" + fake(600, B64))
        add(
            keys,
            label,
            "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n  tls.key: {S}",
            base64.b64encode(pem.encode()).decode(),
        )
    pem = _pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAA" + fake(300, B64))
    add(keys, "base64-openssh-json", '{"ssh_key_b64": "{S}"}', base64.b64encode(pem.encode()).decode())
    pem = _pem("EC PRIVATE KEY", "MHcC" + fake(160, B64))
    add(keys, "base64-pem-env", "SIGNING_KEY_B64={S}", base64.b64encode(pem.encode()).decode())
    pem = _pem("PRIVATE KEY", "MIIEv" + fake(300, B64))
    add(keys, "base64-pem-bare", "decode this: {S}", base64.b64encode(pem.encode()).decode())
    add(
        keys,
        "kubeconfig-client-key",
        "users:\n- name: admin\n  user:\n    client-key-data: {S}",
        base64.b64encode(_pem("RSA PRIVATE KEY", "MIIEv" + fake(300, B64)).encode()).decode(),
    )
    add(
        keys,
        "putty",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 1\n{S}\nPrivate-MAC: "
        + r(64, HEX),
        "AAAAI" + fake(40, B64),
    )

    # -- secrets base64-wrapped (gitleaks' kubernetes-secret-yaml, docker config) --
    enc = "base64-wrapped"

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    add(
        enc,
        "k8s-secret-data-url",
        "kind: Secret\ndata:\n  DATABASE_URL: {S}",
        b64(f"postgres://app:{pw()}@db:5432/app"),
    )
    auth = b64("me:" + pw())
    add(
        enc,
        "dockerconfigjson",
        "data:\n  .dockerconfigjson: {S}",
        b64('{"auths": {"ghcr.io": {"auth": "' + auth + '"}}}'),
    )
    add(enc, "base64-config-env", "APP_CONFIG_B64={S}", b64(f"db:\n  password: {pw()}\n"))
    add(
        enc, "base64-netrc", "echo {S} | base64 -d > ~/.netrc", b64(f"machine api.example.com login me password {pw()}")
    )
    add(
        enc, "base64-env-file", "kind: Secret\ndata:\n  .env: {S}", b64(f"STRIPE_API_KEY=sk_live_{fake(40)}\nDEBUG=0\n")
    )

    # -- secret-named name/value pairs, in every common syntax --
    kv = "name-value"
    add(kv, "env-openai-key", "OPENAI_KEY={S}", fake(48))
    add(kv, "env-db-pass", "DB_PASS={S}", pw())
    add(kv, "env-db-pwd", "MYSQL_PWD={S}", pw())
    add(kv, "env-passphrase", "GPG_PASSPHRASE='{S}'", "FAKE correct horse " + r(8))
    add(kv, "env-quoted", 'export SERVICE_API_KEY="{S}"', fake(32))
    add(kv, "env-secret-key", "DJANGO_SECRET_KEY='{S}'", "django-insecure-" + fake(40, ALNUM + "!@#%^*(-_=+)"))
    add(kv, "env-encryption-key", "ENCRYPTION_KEY={S}", r(44, B64))
    add(kv, "env-windows-set", "set DB_PASSWORD={S}", pw())
    add(kv, "env-powershell", '$env:API_TOKEN = "{S}"', fake(32))
    add(kv, "dockerfile-env", "ENV DB_PASSWORD {S}", pw())
    add(kv, "docker-run-e", "docker run -e POSTGRES_PASSWORD={S} postgres:16", pw())
    add(kv, "compose-list", "    environment:\n      - REDIS_PASS={S}\n      - TZ=UTC", pw())
    add(kv, "compose-map", "    environment:\n      DB_PASSWORD: {S}\n      TZ: UTC", pw())
    add(kv, "yaml", "database:\n  host: db\n  password: {S}", pw())
    add(kv, "yaml-pass", "smtp:\n  user: me\n  pass: {S}", pw())
    add(kv, "yaml-quoted", "auth:\n  client_secret: '{S}'", fake(32))
    add(kv, "yaml-secret-named-key", "stripe:\n  signing_key: {S}", fake(40))
    add(kv, "json", '{"user": "app", "password": "{S}"}', pw())
    add(kv, "json-camel", '{"clientSecret": "{S}", "clientId": "abc"}', fake(32))
    add(kv, "json-pass", '{"db_pass": "{S}"}', pw())
    add(kv, "json-api-key-named", '{"openaiKey": "{S}"}', fake(48))
    add(kv, "k8s-env-name-value", "env:\n  - name: DB_PASSWORD\n    value: {S}\n  - name: TZ\n    value: UTC", pw())
    add(kv, "k8s-env-name-value-quoted", 'env:\n- name: "API_KEY"\n  value: "{S}"', fake(32))
    add(
        kv,
        "ecs-json-name-value",
        '"environment": [{"name": "DB_PASSWORD", "value": "{S}"}, {"name": "TZ", "value": "UTC"}]',
        pw(),
    )
    add(
        kv,
        "ecs-json-multiline",
        '"environment": [\n  {\n    "name": "STRIPE_KEY",\n    "value": "{S}"\n  }\n]',
        fake(32),
    )
    add(kv, "terraform-hcl", 'resource "x" "y" {\n  password = "{S}"\n}', pw())
    add(kv, "terraform-name-value", '  env { name = "DB_PASSWORD"\n        value = "{S}" }', pw())
    add(kv, "ini", "[database]\nuser = app\npassword = {S}", pw())
    add(kv, "ini-pass", "[smtp]\npass = {S}", pw())
    add(kv, "properties", "spring.datasource.password={S}", pw())
    add(kv, "toml", '[tool.x]\napi_key = "{S}"', fake(32))
    add(kv, "xml-element", "<settings><password>{S}</password></settings>", pw())
    add(kv, "xml-attribute", '<datasource user="app" password="{S}" url="jdbc:x"/>', pw())
    add(kv, "xml-nuget", '<add key="ClearTextPassword" value="{S}" />', pw())
    add(kv, "netrc-multiline", "machine api.example.com\n  login me\n  password {S}\n", pw())
    add(kv, "netrc-oneline", "machine api.example.com login me password {S}", pw())
    add(kv, "netrc-default", "default\nlogin me\npassword {S}", pw())
    add(kv, "cli-password-flag", "tool --password {S} --user me", pw())
    add(kv, "cli-pass-flag", "mongosh --username me --pass {S}", pw())
    add(kv, "cli-mysql-p", "mysql -u root -p{S} shop", pw())
    add(kv, "cli-openssl-pass", "openssl pkcs12 -export -in c.pem -passout pass:{S}", pw())
    add(kv, "cli-key-flag", "stripe listen --api-key {S}", fake(32))
    add(kv, "go", 'apiKey := "{S}"', fake(32))
    add(kv, "js-const", 'const apiKey = "{S}";', fake(32))
    add(kv, "python-kwarg", 'psycopg.connect(user="app", password="{S}")', pw())
    add(kv, "python-environ-set", 'os.environ["OPENAI_API_KEY"] = "{S}"', fake(48))
    add(kv, "php-define", "define('DB_PASSWORD', '{S}');", pw())
    add(kv, "ruby-hash", "config.api_key => '{S}'", fake(32))
    add(kv, "php-array", "'password' => '{S}',", pw())
    add(kv, "github-actions-env", "    env:\n      API_TOKEN: {S}", fake(32))
    add(kv, "pgpass", "echo 'db:5432:app:app:{S}' >> ~/.pgpass", pw())
    add(kv, "connection-string", "Server=db;Database=app;User Id=sa;Password={S};", pw())
    add(kv, "url-userinfo", "postgres://app:{S}@db.internal:5432/app", pw())
    add(kv, "npmrc-password", "//registry.example.com/:_password={S}", base64.b64encode(pw().encode()).decode())
    add(kv, "pip-conf", "index-url = https://me:{S}@pypi.example.com/simple", pw())
    add(kv, "git-credentials", "https://me:{S}@github.com", "ghp_" + fake(36))
    add(kv, "htpasswd-plain", "SMTP_PASSWORD: {S}", pw())

    # -- signed URLs and secret query parameters --
    url = "signed-urls"
    add(
        url,
        "aws-presigned",
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAFAKE%2F20260101&X-Amz-Signature={S}",
        r(64, HEX),
    )
    add(
        url,
        "aws-presigned-session",
        "https://b.s3.amazonaws.com/k?X-Amz-Security-Token={S}&X-Amz-Expires=300",
        "IQoJb3JpZ2lu" + fake(200, URLSAFE),
    )
    add(
        url,
        "gcs-signed",
        "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%40p.iam.gserviceaccount.com&X-Goog-Signature={S}",
        r(512, HEX),
    )
    add(
        url,
        "gcs-signed-v2",
        "https://storage.googleapis.com/b/o?GoogleAccessId=sa@p.iam&Expires=1&Signature={S}",
        fake(300, ALNUM + "%"),
    )
    add(
        url,
        "azure-sas",
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&ss=b&sp=r&sig={S}",
        fake(43, ALNUM + "%"),
    )
    add(
        url,
        "cloudfront-signed",
        "https://d111.cloudfront.net/i.jpg?Expires=1&Signature={S}&Key-Pair-Id=K2FAKE",
        fake(170, URLSAFE + "~"),
    )
    add(url, "query-access-token", "GET /cb?access_token={S}&x=1", fake(40))
    add(
        url,
        "query-key",
        "https://maps.googleapis.com/maps/api/geocode/json?address=x&key={S}",
        "AIza" + fake(35, URLSAFE),
    )
    add(url, "query-api-key", "https://api.example.com/v1?api_key={S}", fake(32))
    add(url, "query-auth", "https://p.firebaseio.com/x.json?auth={S}", fake(40))
    add(url, "query-client-secret", "POST /token?client_id=x&client_secret={S}", fake(32))
    add(url, "sentry-dsn", "SENTRY_DSN=https://{S}@o12345.ingest.sentry.io/678", r(32, HEX))
    add(url, "basic-auth-url", "curl https://admin:{S}@jenkins.internal/api/json", pw())

    # -- tokens in headers and bare tokens --
    hdr = "headers"
    add(hdr, "jwt", "cookie {S}", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0." + r(43, URLSAFE))
    add(hdr, "bearer", "Authorization: Bearer {S}", fake(40))
    add(hdr, "basic", "Authorization: Basic {S}", base64.b64encode(("me:" + pw()).encode()).decode())
    add(hdr, "token-scheme", "Authorization: token {S}", r(40, HEX))
    add(hdr, "x-api-key", "x-api-key: {S}", fake(32))
    add(hdr, "api-key-header", "api-key: {S}", r(32, HEX))
    add(hdr, "private-token", "PRIVATE-TOKEN: {S}", fake(20))
    add(hdr, "shopify-header", "X-Shopify-Access-Token: {S}", fake(32))
    add(hdr, "dd-api-key-header", "DD-API-KEY: {S}", r(32, HEX))
    add(hdr, "apim-key", "Ocp-Apim-Subscription-Key: {S}", r(32, HEX))
    add(hdr, "cookie", "Cookie: sessionid={S}; csrftoken=x", fake(32))
    add(hdr, "curl-header-bearer", 'curl -H "Authorization: Bearer {S}" https://api.internal', fake(40))

    # -- issue 31: shapes bench/scanner_coverage.py found leaking against gitleaks' and detect-secrets' rules --
    add(dev, "adobe-client-secret", "{S}", "p8e-" + fake(32))
    add(dev, "harness-pat", "harness token {S} expires soon", "pat." + fake(22, URLSAFE) + "." + r(24) + "." + r(20))
    add(dev, "harness-sat", "HARNESS_API_KEY: {S}", "sat." + fake(22, URLSAFE) + "." + r(24) + "." + r(20))
    add(dev, "sonarqube-project-analysis", "{S}", "sqp_" + fake(40))
    add(dev, "terraform-cloud-bare", "app.terraform.io -> {S}", r(14) + ".atlasv1." + fake(64, URLSAFE))
    add(dev, "databricks-suffixed", "{S}", "dapi" + r(32, HEX) + "-2")
    add(
        dev,
        "authress",
        "{S}",
        "sc_" + fake(12, LOWER) + "." + r(4, LOWER) + ".acc_" + r(16, LOWER) + "." + fake(60, B64),
    )
    add(dev, "artifactory-password", "{S}", "AP6" + fake(20))
    add(dev, "sidekiq-enterprise", "BUNDLE_ENTERPRISE__CONTRIBSYS__COM={S}", r(8, HEX) + ":" + r(8, HEX))
    add(dev, "sidekiq-gem-source", 'source "https://{S}@enterprise.contribsys.com/"', r(8, HEX) + ":" + r(8, HEX))
    add(cloud, "bedrock-short-lived", "{S}", "bedrock-api-key-" + "YmVkcm9jay5hbWF6b25hd3Mu" + "Y29t" + fake(80, B64))
    add(msg, "mapbox-public", "MAPBOX_TOKEN: {S}", "pk." + fake(60) + "." + r(22))
    add(msg, "mailchimp-bare", "{S}", r(32, HEX) + "-us21")
    add(msg, "facebook-app-token", "{S}", r(15, string.digits) + "|" + fake(27, URLSAFE))
    add(pay, "stripe-restricted-prod", "{S}", "rk_prod_" + fake(24))
    add(pay, "flutterwave-public", "{S}", "FLWPUBK_TEST-" + r(32, HEX) + "-X")
    add(pay, "flutterwave-encryption", "{S}", "FLWSECK_TEST-" + r(12, HEX))

    # token prefixes from trufflehog's detectors
    add(dev, "deno-deploy", "DENO_DEPLOY_TOKEN={S}", "ddp_" + fake(36))
    add(dev, "doppler-service", "{S}", "dp.st.prd." + fake(40))
    add(dev, "contentful-pat", "{S}", "CFPAT-" + fake(43, URLSAFE))
    add(ai, "nvidia-nim", "{S}", "nvapi-" + fake(64, URLSAFE))
    add(dev, "posthog-personal", "{S}", "phx_" + fake(43))
    add(dev, "supabase-access", "supabase login --token {S}", "sbp_" + r(40, LOWER))
    add(dev, "tailscale-auth", "tailscale up --authkey={S}", "tskey-auth-" + fake(12) + "-" + r(30))
    add(pay, "razorpay", "{S}", "rzp_live_" + fake(14))
    add(pay, "stripe-payment-intent-secret", "{S}", "pi_" + fake(24) + "_secret_" + r(25))
    add(
        msg,
        "zapier-webhook",
        "curl -X POST https://hooks.zapier.com/hooks/catch/{S}",
        r(7, string.digits) + "/" + fake(6, LOWER) + "/",
    )

    # keys named only for their provider (gitleaks anchors these rules on the provider's name)
    prov = "provider-named"
    add(prov, "adafruit-env", "ADAFRUIT_IO = {S}", fake(32, LOWER))
    add(prov, "twitter-yaml", "twitter: {S}", fake(50))
    add(prov, "kucoin-json", '{"kucoin": "{S}"}', uuid())
    add(prov, "sumologic-python", "sumologic = '{S}'", fake(64))
    add(prov, "okta-ini", "OKTA = {S}", "00" + fake(40))
    add(prov, "datadog-yaml", "datadog: {S}", fake(40, LOWER))
    add(prov, "etsy-env", "etsy={S}", fake(24, LOWER))
    add(prov, "finnhub-go", 'finnhub := "{S}"', "FAKE0" + r(15, LOWER))
    add(prov, "gitter-make", 'GITTER ?= "{S}"', fake(40, LOWER))
    add(prov, "zendesk-php", "'zendesk' => '{S}',", fake(40))
    add(prov, "new-relic", "new_relic = {S}", fake(40))
    add(prov, "dropbox-yaml", "dropbox: {S}", fake(64))
    add(prov, "contentful-hcl", 'contentful = "{S}"', fake(43, URLSAFE))
    add(prov, "heroku-yaml", "heroku: {S}", uuid())
    add(prov, "plaid-env", "PLAID = {S}", fake(30, LOWER))
    add(prov, "cloudflare-yaml", "CLOUDFLARE: {S}", fake(40))
    add(prov, "bare-key-under-provider", "ibm_cloud:\n  key: {S}\n  region: eu-de", "FAKE" + r(40, URLSAFE))

    # passwords given to commands that read them from a flag or an argument
    add(kv, "cli-sqlcmd", 'sqlcmd -S db -U sa -P {S} -Q "SELECT 1"', pw())
    add(kv, "cli-mongosh-p", "mongosh -u admin -p {S} --authenticationDatabase admin", pw())
    add(kv, "cli-az-login", "az login -u ops@example.com -p {S}", pw())
    add(kv, "cli-zip-P", "zip -r -P {S} backup.zip data/", pw())
    add(kv, "cli-7z-p", "7z a -p{S} -mhe=on backup.7z data/", pw())
    add(kv, "cli-htpasswd-b", "htpasswd -bc /etc/nginx/.htpasswd admin {S}", pw())
    add(kv, "cli-rabbitmqctl", "rabbitmqctl add_user app {S}", pw())
    add(kv, "cli-smbclient", "smbclient //fileserver/share -U admin%{S}", pw())
    add(kv, "cli-lftp", "lftp -u deploy,{S} ftp.example.com", pw())
    add(kv, "cli-vault-login", "vault login {S}", fake(26))
    add(kv, "cli-openssl-k", "openssl enc -aes-256-cbc -pbkdf2 -k {S} -in a.tar -out a.enc", pw())
    add(kv, "cli-keytool", "keytool -importkeystore -srckeystore a.p12 -srcstorepass {S} -destkeystore b.jks", pw())
    add(kv, "cli-plink-pw", "plink -ssh -pw {S} deploy@host uptime", pw())
    add(kv, "cli-securestring", '$pw = ConvertTo-SecureString "{S}" -AsPlainText -Force', pw())
    add(kv, "cli-gpg-passphrase", "gpg --batch --passphrase {S} -d secrets.gpg", pw())
    add(kv, "systemd-setcredential", "SetCredential=db-password:{S}", pw())
    return items


FORMATS = secret_formats()
FAMILIES = sorted({f.family for f in FORMATS})
