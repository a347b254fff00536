"""Secret masking before text leaves the process, compared with Hermes's own redactor."""

from __future__ import annotations

import pytest

from stowage.context_engine.redact import MASK, contains_secret, redact

# (label, text, secret): the secret must not survive redaction.
OPENAI = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
ANTHROPIC = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-AbCdEfGh"
GITHUB = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PRIVATE_KEY_BODY = "MIIEowIBAAKCAQEA7bq9yXk3Jr0nTq6bZ8F2hL+K1mJ0s9yT3vXw4pQ2rN8aBcD"

CORPUS = [
    ("openai", f"export OPENAI_KEY_HINT=none; using {OPENAI} for calls", OPENAI),
    ("openai-bare", f"key: {OPENAI}", OPENAI),
    ("anthropic", f"ANTHROPIC says {ANTHROPIC} is set", ANTHROPIC),
    ("github-classic", f"git push with {GITHUB}", GITHUB),
    (
        "github-fine",
        "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF in use",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
    ),
    ("github-oauth", "gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("slack-bot", "SLACK xoxb-2048-4096-AbCdEfGhIjKlMnOp posted", "xoxb-2048-4096-AbCdEfGhIjKlMnOp"),
    (
        "slack-app",
        "xapp-1-A0123456789-1234567890123-abcdef0123456789",
        "xapp-1-A0123456789-1234567890123-abcdef0123456789",
    ),
    ("google", "maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY here", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("aws-access-key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    (
        "aws-secret-env",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("stripe-live", "charge with sk_live_4eC39HqLyjWDarjtT1zdp7dc now", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe-test", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe-restricted", "rk_live_51H8abcdEFGHijklMNOPqrst", "rk_live_51H8abcdEFGHijklMNOPqrst"),
    ("huggingface", "HF hub: hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"),
    (
        "sendgrid",
        "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",
        "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",
    ),
    (
        "npm",
        "//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    ("pypi", "password = pypi-AgEIcHlwaS5vcmcCJGE0ZjYx", "pypi-AgEIcHlwaS5vcmcCJGE0ZjYx"),
    ("groq", "gsk_AbCdEfGhIjKlMnOpQrStUvWx", "gsk_AbCdEfGhIjKlMnOpQrStUvWx"),
    ("xai", "xai-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd", "xai-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd"),
    (
        "bearer-header",
        "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789mno' https://api.example.com",
        "abcDEF123456ghiJKL789mno",
    ),
    ("bearer-prose", "the request sent Bearer Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1 and failed", "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1"),
    ("basic-header", "Authorization: Basic dXNlcm5hbWU6cGFzc3dvcmQxMjM=", "dXNlcm5hbWU6cGFzc3dvcmQxMjM="),
    ("token-header", "Authorization: token 0123456789abcdef0123", "0123456789abcdef0123"),
    ("proxy-auth", "Proxy-Authorization: Basic cHJveHl1c2VyOnByb3h5cGFzcw==", "cHJveHl1c2VyOnByb3h5cGFzcw=="),
    ("x-api-key", "x-api-key: my-custom-backend-key-42", "my-custom-backend-key-42"),
    ("x-goog-api-key", "X-Goog-Api-Key: goog0123456789secret", "goog0123456789secret"),
    ("env-line", "DATABASE_PASSWORD=s3cr3t-Pa55w0rd", "s3cr3t-Pa55w0rd"),
    ("env-token", "MY_SERVICE_TOKEN=abc123randomstringvalue", "abc123randomstringvalue"),
    ("env-quoted", 'export GITHUB_TOKEN="opaque-value-9f8e7d6c"', "opaque-value-9f8e7d6c"),
    ("env-lower", "api_key=lowercase-secret-value", "lowercase-secret-value"),
    (
        "env-rails",
        "SECRET_KEY_BASE=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ),
    ("env-basic-auth", "BASIC_AUTH=user:pass1234", "user:pass1234"),
    ("env-qualified", "export API_KEY_PROD='prod-key-0001'", "prod-key-0001"),
    ("env-numbered", "GITHUB_TOKEN_2=second-token-value", "second-token-value"),
    ("dotted-config", "spring.datasource.password=hunter2hunter2", "hunter2hunter2"),
    ("yaml-password", "database:\n  host: db.local\n  password: x7Gh2kLq\n", "x7Gh2kLq"),
    ("yaml-api-key", "openai:\n  api_key: plainvalue123\n", "plainvalue123"),
    ("yaml-list", "- client_secret: zzTopSecretzz\n", "zzTopSecretzz"),
    ("json-api-key", '{"api_key": "json-secret-value-1", "model": "gpt"}', "json-secret-value-1"),
    ("json-password", '{"user": "bob", "password": "correct horse battery staple"}', "correct horse battery staple"),
    ("json-apiKey", '{"apiKey":"camel-case-secret"}', "camel-case-secret"),
    ("json-access-token", '{"access_token": "opaque.oauth.token.value"}', "opaque.oauth.token.value"),
    ("json-spaced-colon", '{"password" : "spaced-colon-pw"}', "spaced-colon-pw"),
    ("json-client-secret", '{"client_secret": "cs-0123456789"}', "cs-0123456789"),
    (
        "private-key",
        f"-----BEGIN RSA PRIVATE KEY-----\n{PRIVATE_KEY_BODY}\n-----END RSA PRIVATE KEY-----",
        PRIVATE_KEY_BODY,
    ),
    (
        "openssh-key",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PRIVATE_KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----",
        PRIVATE_KEY_BODY,
    ),
    ("url-password", "git clone https://alice:Sup3rS3cret@github.com/org/repo.git", "Sup3rS3cret"),
    (
        "url-bare-token",
        "git remote set-url origin https://ghtoken0123456789@github.com/org/repo.git",
        "ghtoken0123456789",
    ),
    ("postgres", "DATABASE_URL postgresql://app:pgPassw0rd@db.internal:5432/app", "pgPassw0rd"),
    ("mysql", "mysql://root:rootpw123@localhost/db", "rootpw123"),
    ("mongodb-srv", "mongodb+srv://admin:m0ng0pw@cluster0.abc.mongodb.net/test", "m0ng0pw"),
    ("redis", "redis://default:r3disPw@cache:6379/0", "r3disPw"),
    ("amqp", "amqp://guest:rabbitPw9@mq:5672/", "rabbitPw9"),
    ("query-token", "GET https://api.example.com/v1/items?access_token=qwerty12345&page=2", "qwerty12345"),
    ("query-api-key", "https://maps.example.com/geo?q=paris&api_key=k3y-v4lu3", "k3y-v4lu3"),
    ("query-signature", "https://bucket.s3.amazonaws.com/f?X-Amz-Signature=abcdef0123456789", "abcdef0123456789"),
    ("jwt", f"cookie session={JWT}", JWT),
    ("jwt-bare", f"decoded {JWT} ok", JWT),
    ("telegram", "bot token 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"),
    (
        "telegram-url",
        "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/getMe",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
    ),
    ("form-body", "grant_type=password&username=bob&password=formPw123&client_id=cli", "formPw123"),
    ("perplexity", "pplx-AbCdEfGhIjKlMnOpQrSt", "pplx-AbCdEfGhIjKlMnOpQrSt"),
    ("digitalocean", "dop_v1_0123456789abcdef0123456789abcdef", "dop_v1_0123456789abcdef0123456789abcdef"),
    ("gitlab", "glpat-AbCdEfGhIjKlMnOpQrSt", "glpat-AbCdEfGhIjKlMnOpQrSt"),
    # structured formats (issue 23)
    (
        "pgp-private",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGVpgpBody0123\n=Ab12\n-----END PGP PRIVATE KEY BLOCK-----",
        "lQOYBGVpgpBody0123",
    ),
    ("redis-empty-user", "redis://:r3disOnlyPw@cache:6379/0", "r3disOnlyPw"),
    ("url-password-at", "postgres://app:p@ssw0rdAfterAt@db:5432/app", "ssw0rdAfterAt"),
    ("odbc-pwd", "Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd=odbcPw0rd99;Encrypt=yes", "odbcPw0rd99"),
    ("odbc-pwd-braced", "Server=db;UID=sa;PWD={br;acedPw99};", "acedPw99"),
    ("ado-password-spaces", "Server=db;User Id=sa;Password=two words99;", "words99"),
    (
        "vault-header",
        "curl -H 'X-Vault-Token: hvs.vaultTokenValue0123456789' https://vault:8200/v1/x",
        "vaultTokenValue0123456789",
    ),
    ("rapidapi-header", "-H 'X-RapidAPI-Key: rapid0123456789abcdef'", "rapid0123456789abcdef"),
    ("xml-password", "<server><username>dev</username><password>xmlPw0rd99</password></server>", "xmlPw0rd99"),
    ("python-dict", "{'user': 'bob', 'password': 'pyDictPw99'}", "pyDictPw99"),
    ("js-object", 'new Api({ token: "jsObjectToken99", retries: 3 })', "jsObjectToken99"),
    ("docker-auth", '{"auths": {"ghcr.io": {"auth": "bWU6ZG9ja2VyUHc5OQ=="}}}', "bWU6ZG9ja2VyUHc5OQ=="),
    ("stripe-webhook", "whsec_AbCdEfGhIjKlMnOpQrStUv0123456789", "whsec_AbCdEfGhIjKlMnOpQrStUv0123456789"),
    ("shell-yaml", "echo '  password: correct-horse-battery' > .env", "correct-horse-battery"),
    ("cookie", "Cookie: sessionid=cookieSess0123; theme=dark", "cookieSess0123"),
    ("set-cookie", "Set-Cookie: session=setCookieSess0123; Path=/; HttpOnly", "setCookieSess0123"),
    # key and config files, command-line flags (redact_formats.py)
    (
        "putty-private-lines",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 2\nAAAAC3Nz\nAAAAIPub\n"
        "Private-Lines: 2\nAAAAIPuttyPriv0123\nAAAAIPuttyPriv4567\nPrivate-MAC: 0a1b2c",
        "PuttyPriv4567",
    ),
    ("pgpass-echo", "echo 'db:5432:app:app:pgpassPw0rd99' >> ~/.pgpass", "pgpassPw0rd99"),
    ("pgpass-cat", "$ cat ~/.pgpass\n*:*:*:postgres:pgpass Pw0rd 99", "Pw0rd 99"),
    ("dotnet-add-key", '<add key="Smtp:Password" value="dotnetPw0rd99" />', "dotnetPw0rd99"),
    ("dotnet-connection-string", '<add connectionString="Server=db;Password=two words99" />', "words99"),
    ("plist-password", "<key>password</key>\n\t<string>plistPw0rd99</string>", "plistPw0rd99"),
    ("flag-token", "gh auth login --token flagToken0123", "flagToken0123"),
    ("flag-api-key-quoted", "tool --api-key 'flag key 0123'", "flag key 0123"),
    ("flag-client-secret", "az login --client-secret=flagSecret0123", "flagSecret0123"),
]


@pytest.mark.parametrize("label,text,secret", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_secret_is_masked(label, text, secret):
    assert secret in text
    out = redact(text)
    assert secret not in out, out
    assert MASK in out
    assert contains_secret(text)


def test_context_around_secrets_is_kept():
    assert redact("Authorization: Bearer abcDEF123456ghiJKL789mno") == f"Authorization: Bearer {MASK}"
    assert redact("DATABASE_PASSWORD=s3cr3t-Pa55w0rd") == f"DATABASE_PASSWORD={MASK}"
    assert redact('{"api_key": "json-secret-value-1"}') == f'{{"api_key": "{MASK}"}}'
    assert redact("postgresql://app:pgPassw0rd@db:5432/app") == f"postgresql://app:{MASK}@db:5432/app"
    assert redact("https://x.example.com/cb?code=abc&state=xyz") == f"https://x.example.com/cb?code={MASK}&state=xyz"


FALSE_POSITIVES = [
    "token_count=5",
    "max_tokens=4096 and token_count=5",
    "MAX_TOKENS=4096 TOKEN_COUNT=5 TOKENIZERS_PARALLELISM=false",
    "AUTHOR=Jane OAUTH_CLIENT_ID=abc DB_PASSWORD_FILE=/run/secrets/db AUTH_MODE=oauth",
    "password_hint: ask the admin",
    "We count tokens per message; the token budget is 2000 tokens.",
    "Reset your password from the settings page if you forget your password.",
    "The secret to good compaction is keeping the newest user request.",
    "def get_api_key(self): return os.environ['API_KEY']",
    "api_key = os.getenv('OPENAI_API_KEY')",
    "Use the --token flag to pass a token.",
    "see https://example.com/docs?page=2&sort=asc",
    "author: Jane Doe",
    "error: token expired, please log in again",
    "The key insight is that sessions end.",
    "session_id=abc123 user_id=42",
    "the high-risk-assessment of ask-me-anything-2024-report-v2",
    'password = getpass.getpass("Password: ")',
    'if (!password) { throw new Error("password: required"); }',
    "PWD=/home/dev/project\nOLDPWD=/home/dev",
    '<token id="1"><word>hello</word></token>',
    '{"auth": "basic", "credsStore": "desktop"}',
    "redis://localhost:6379/0 and http://[::1]:8080/health",
    '{"url":"http://x:1","email":"y@z.com"}',
    "Driver={ODBC Driver 18};Server=tcp:db,1433;Database=app;Trusted_Connection=yes;",
    "Content-Type: application/json\nX-Request-Id: 8f14e45f",
    "the cookie: chocolate chip",
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBGV1\n-----END PGP PUBLIC KEY BLOCK-----",
    "Private-Lines: the number of base64 lines that follow",
    "db.internal:5432:app:app:readonly",
    "one line per server in ~/.pgpass: hostname:port:database:username:password",
    '<add key="PasswordMinLength" value="12" />',
    "<key>PasswordHint</key><string>the dog</string>",
    "pass --token to the CLI; --max-tokens 4096 --token-file ./t --password-stdin",
    "vault login --token $VAULT_TOKEN; gh auth login --with-token < token.txt; tool --secret ./s.json",
    "",
]


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_no_false_positives(text):
    assert redact(text) == text
    assert not contains_secret(text)


def test_long_text_is_redacted_too():
    text = "log line without secrets\n" * 400 + f"leaked {OPENAI}\n" + "more log\n" * 400
    assert len(text) > 4096
    out = redact(text)
    assert OPENAI not in out and out.count("\n") == text.count("\n")


def test_redact_is_idempotent():
    for _label, text, _secret in CORPUS:
        once = redact(text)
        assert redact(once) == once


# -- comparison with Hermes's own redactor ---------------------------------------------------

HERMES_EXTRA = [
    # shapes the built-in handles that are not in the list above
    ("hermes-cfg-anchored", "export api_key=anchored-value-123", "anchored-value-123"),
    ("hermes-yaml-auth-token", "auth_token: yamlToken999", "yamlToken999"),
    ("hermes-json-secret-value", '{"secret_value": "sv-0000-1111"}', "sv-0000-1111"),
    ("hermes-json-bearer", '{"bearer": "bearer-json-val"}', "bearer-json-val"),
    ("hermes-json-refresh", '{"refresh_token": "rt-abcdef"}', "rt-abcdef"),
    ("hermes-x-auth-token", "X-Auth-Token: tok_abcdef123", "tok_abcdef123"),
    ("hermes-credential-env", "SERVICE_CREDENTIAL=cred-xyz-789", "cred-xyz-789"),
    ("hermes-json-key-material", '{"key_material": "km-0123456789"}', "km-0123456789"),
    ("hermes-json-secret-input", '{"secret_input": "si-0123456789"}', "si-0123456789"),
    ("hermes-fireworks", "fw_" + "a1B2c3D4e5" * 3, "fw_" + "a1B2c3D4e5" * 3),
    ("hermes-notion", "ntn_AbCdEfGhIjKlMnOp12", "ntn_AbCdEfGhIjKlMnOp12"),
    ("hermes-tavily", "tvly-AbCdEfGhIjKlMnOp12", "tvly-AbCdEfGhIjKlMnOp12"),
    ("hermes-replicate", "r8_AbCdEfGhIjKlMnOp12", "r8_AbCdEfGhIjKlMnOp12"),
    ("hermes-codex", "gAAAAABlAbCdEfGhIjKlMnOpQrSt", "gAAAAABlAbCdEfGhIjKlMnOpQrSt"),
]


@pytest.fixture(scope="module")
def hermes_redact():
    """Hermes's redact_sensitive_text, with redaction forced on whatever HERMES_REDACT_SECRETS says."""
    redact_module = pytest.importorskip("agent.redact")

    def run(text: str) -> str:
        return redact_module.redact_sensitive_text(text, force=True)

    assert run(f"k={OPENAI}") != f"k={OPENAI}", "the built-in redactor is not active"
    return run


@pytest.mark.parametrize("label,text,secret", CORPUS + HERMES_EXTRA, ids=[c[0] for c in CORPUS + HERMES_EXTRA])
def test_stowage_masks_whatever_hermes_masks(hermes_redact, label, text, secret):
    hermes_out = hermes_redact(text)
    if hermes_out == text:
        pytest.skip("the built-in leaves this sample unchanged")
    assert secret not in redact(text), f"Hermes redacts {label!r} ({hermes_out!r}) but Stowage leaks it"


def test_comparison_covers_most_of_the_corpus(hermes_redact):
    """Guard against a comparison that silently skips everything."""
    changed = [label for label, text, _ in CORPUS + HERMES_EXTRA if hermes_redact(text) != text]
    assert len(changed) >= 40


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_hermes_also_leaves_false_positive_samples_alone_or_we_are_not_stricter(hermes_redact, text):
    # Documents the false-positive corpus: where the built-in changes nothing, neither do we.
    if hermes_redact(text) == text:
        assert redact(text) == text


def test_a_vendor_key_glued_to_a_dash_is_masked():
    key = "glpat-" + "Ab3dEf6hIj9kLm2nOp5q"
    assert key not in redact(f"glab auth login --token-{key}")
    assert redact(f"x -{key} y") == "x -[REDACTED] y"
