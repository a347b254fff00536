"""Secret masking before text leaves the process, compared with Hermes's own redactor."""

from __future__ import annotations

import pytest

from stowage.context_engine.redaction.redact import MASK, contains_secret, redact

from .redact_corpus import CORPUS, FALSE_POSITIVES, HERMES_EXTRA, OPENAI


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


# -- issue 31: the formats public scanners know, and ordinary text left alone ------------------------------


def _fake(n: int, seed: int = 31) -> str:
    """A random-looking fake of ``n`` characters (built here, so no whole token sits in the source)."""
    import random
    import string

    rng = random.Random(seed + n)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


ISSUE_31 = [
    ("netrc-multiline", "machine api.example.com\n  login me\n  password {pw}\n", "{pw}"),
    ("k8s-name-value", "env:\n  - name: DB_PASSWORD\n    value: {pw}\n", "{pw}"),
    ("ecs-name-value", '[{"name": "DB_PASSWORD", "value": "{pw}"}]', "{pw}"),
    ("age-secret-key", "{age}", "{age}"),
    ("gcs-signature", "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4&X-Goog-Signature={hex}", "{hex}"),
    ("discord-bot-token", "client.run('{discord}')", "{discord}"),
    ("openai-key-env", "OPENAI_KEY={rand}", "{rand}"),
    ("db-pass-env", "DB_PASS={pw}", "{pw}"),
    ("google-oauth-secret", "pasted: {gocspx}", "{gocspx}"),
    ("k8s-secret-tls-key", "kind: Secret\ndata:\n  tls.key: {tls}\n", "{tls}"),
]


def _fill(template: str) -> str:
    import base64

    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + _fake(64) + "\n-----END RSA PRIVATE KEY-----\n"
    values = {
        "pw": "FAKEpw" + _fake(10),
        "age": "AGE-SECRET-KEY-1" + _fake(200).upper()[:58],
        "hex": _fake(64, 1).lower(),
        "discord": f"MT{_fake(24)}.{_fake(6, 2)}.{_fake(38)}",
        "rand": _fake(48),
        "gocspx": "GOCSPX-" + _fake(28),
        "tls": base64.b64encode(pem.encode()).decode(),
    }
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


@pytest.mark.parametrize("label,template,secret", ISSUE_31, ids=[c[0] for c in ISSUE_31])
def test_the_ten_formats_issue_31_found_leaking_are_masked(label, template, secret):
    import json

    text, secret = _fill(template), _fill(secret)
    assert secret in text
    assert secret not in redact(text)
    assert secret not in redact(json.dumps({"command": text}))  # as tool-call arguments carry it


@pytest.mark.parametrize(
    "text",
    [
        "permissions:\n  contents: read\n  id-token: write",
        "spec:\n  automountServiceAccountToken: false",
        "sk_learn_model = LogisticRegression()\nam_pm_format = '%p'\nsk_feature_names = ['age']",
        "For basic troubleshooting.",
        "password: ${{ secrets.PYPI_API_TOKEN }}",
        "password = var.db_password",
        "token = tokens[0]",
        "def create_user(self, username, password=None):",
        "if token == 'COLLATE':",
        "- secretKey: password",
        "kubectl create secret generic db --from-file=password=./pw.txt",
        "API_KEY_ENV=OPENAI_API_KEY",
        "Cache restored from key: Linux-pip-9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUI=",
        "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db",
        "password: must be at least 12 characters",
        "DB_PASSWORD=\nAPI_KEY=your-api-key-here",  # an empty value: the next line is not it
        "apiKey: import.meta.env.VITE_API_KEY",
        "print(f\"password: '{p.password}' type: {type(p.password)}\")",
        'curl -H "Authorization: Bearer $TOKEN" -u "$USER:$PASSWORD" https://api.example.com',
        "WARNING: Using --password via the CLI is insecure.",
        "auth:\n  existingSecret: db-credentials\n  secretKeys:\n    adminPasswordKey: admin-password",
    ],
)
def test_issue_31_ordinary_configuration_and_code_stay(text):
    assert redact(text) == text


def test_a_secret_behind_json_escapes_is_masked_and_the_json_stays_valid():
    import json

    pw = "FAKEpw" + _fake(12)
    arguments = json.dumps({"path": "config.yml", "content": f"db:\n  user: app\n  password: {pw}\n"})
    out = redact(arguments)
    assert pw not in out
    assert json.loads(out)["content"] == f"db:\n  user: app\n  password: {MASK}\n"


def test_values_and_names_are_judged_by_their_shape():
    from stowage.context_engine.redaction.values import is_plain_value, looks_random, name_kind

    assert [name_kind(n) for n in ("DB_PASS", "id-token", "OPENAI_KEY", "secretKey", "TOKEN_TTL", "cache-key")] == [
        "strong",
        "strong",
        "weak",
        "strong",
        None,
        None,
    ]
    assert name_kind("api_key_id") is None and name_kind("password_policy") is None and name_kind("key") is None
    assert all(is_plain_value(v) for v in ("false", "write", "${{ secrets.X }}", "self.token", "new_password"))
    assert is_plain_value("opaque.oauth.token") and not is_plain_value("opaque.oauth.token", quoted=True)
    assert not any(is_plain_value(v) for v in ("hunter2", "FAKEpw-Abc123", "correct horse battery staple"))
    assert looks_random(_fake(32)) and looks_random("9f86d081884c7d659a2feaa0c55ad015")
    assert not any(looks_random(v) for v in ("expirationSeconds", "sk_regressor_v2", "troubleshooting.", "a b c d e f"))


def test_a_secret_inside_base64_is_masked_and_plain_base64_stays():
    import base64

    url = base64.b64encode(f"postgres://app:FAKEpw{_fake(12)}@db:5432/app".encode()).decode()
    host = base64.b64encode(b"db.internal.example.com").decode()
    image = base64.b64encode(bytes(range(256)) * 4).decode()
    text = f"kind: Secret\ndata:\n  DATABASE_URL: {url}\n  HOST: {host}\n![x](data:image/png;base64,{image})"
    assert redact(text) == text.replace(url, MASK)
