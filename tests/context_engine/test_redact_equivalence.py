"""The accelerated redaction gives exactly what the plain rules give.

Each rule in ``redact_rules.RULES`` carries a gate and a finder that only
make it faster.  The reference here applies every rule's ``pattern.sub`` to
the whole text, with no gate and no finder; :func:`redact` and
:func:`redact_many` must agree with it on every generated text.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stowage.context_engine.redaction.escapes import redact_escaped_strings_many
from stowage.context_engine.redaction.in_base64 import redact_base64_values_many
from stowage.context_engine.redaction.redact import MASK, redact, redact_many
from stowage.context_engine.redaction.rules import RULES, literal_head

from .redact_corpus import CORPUS, FALSE_POSITIVES, HERMES_EXTRA


def reference_redact(text: str) -> str:
    """Escaped string literals decoded and redacted (by this same reference), then every rule's plain sub."""
    if not text:
        return text
    plain = lambda texts: [reference_redact(t) for t in texts]  # noqa: E731
    text = redact_base64_values_many(redact_escaped_strings_many([text], plain), plain)[0]
    for rule in RULES:
        text = rule.pattern.sub(rule.replace, text)
    return text


# Pieces that open or close the rules' patterns, mixed with filler: the
# generated texts hit rule boundaries (keys, separators, runs, line starts)
# far more often than random characters would.
FRAGMENTS = [
    "token",
    "TOKEN",
    "Token",
    "api_key",
    "API_KEY",
    "apiKey",
    "secret",
    "SECRET_KEY_BASE",
    "password",
    "passwd",
    "client_secret",
    "auth",
    "AUTH",
    "private_key",
    "access",
    "credential",
    "_access_key",
    "_COUNT",
    "MY_",
    "bearer",
    "Bearer ",
    "basic",
    "Basic ",
    "authorization",
    "Authorization: ",
    "x-api-key",
    "X-Auth-Token",
    "=",
    " = ",
    ":",
    ": ",
    '"',
    "'",
    "\n",
    "\n\n",
    " ",
    "\t",
    "  ",
    "\u00a0",
    "-",
    "_",
    ".",
    "/",
    "?",
    "&",
    ";",
    "#",
    "@",
    "://",
    "https://",
    "git://",
    "user:",
    "os.getenv",
    "$ENV",
    "sk-",
    "sk_live_",
    "ghp_",
    "AKIA",
    "AIza",
    "xoxb-",
    "xapp-1-",
    "SG.",
    "ya29.",
    "gAAAA",
    "AC",
    "dop_v1_",
    "ASIA",
    "github_pat_",
    "sq0atp-",
    "shpat_",
    "fw_",
    "dapi",
    "=sk-",
    ".ghp_",
    "eyJ",
    "eyJhbGciOiJIUzI1NiJ9",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "123456789",
    "12345678:",
    "0123456789abcdef",
    "AbCdEfGhIjKlMnOpQrSt",
    "abcdefghij",
    "ZZZZZZZZZZZZZZZZZZZZ",
    "ſ",
    "ı",
    "İ",
    "K",
    "١٢٣٤٥٦٧٨",
    "é",
    "\x00",
    # the webhook, connection-string, AWS-secret, command-line and YAML-comment rules
    "hooks.slack.com/services/",
    "hooks.slack.com/",
    "discord.com/api/webhooks/",
    "discordapp.com/api/webhooks/",
    "T0FAKE/B0FAKE/x",
    "AccountKey=",
    "accountkey",
    "SharedAccessKey=",
    "Shared_Access_Key",
    "account_key",
    "aws_secret_access_key ",
    "AWS_SECRET_KEY",
    "SecretAccessKey",
    "secret-access-key",
    " | ",
    "aws ",
    "AbCdEfGhIjKlMnOpQrStAbCdEfGhIjKlMnOpQrSt",
    "Ab/Cd+EfGhIjKlMnOpQr",
    "mysql",
    "mysqldump ",
    "mariadb ",
    " -p",
    " -pFAKEpw",
    "-p'",
    "docker login ",
    "docker ",
    "login",
    "--password",
    "--password ",
    "machine ",
    " password ",
    "password",
    "# ",
    " # comment",
    "\r\n",
    "\r",
    "glptt-",
    "gldt-",
    "glrt-",
    # the structured formats: PGP blocks, connection strings, headers, cookies, XML, dicts, shell YAML, docker auth
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "-----END PGP PRIVATE KEY BLOCK-----",
    " BLOCK",
    "whsec_",
    "hvs.",
    "rk_test_",
    "dckr_pat_",
    "redis://:",
    "p@ss",
    "Pwd=",
    "PWD",
    "pwd",
    "{",
    "}",
    "}}",
    "$PWD",
    "/home",
    "Uid=sa;",
    "X-Vault-Token",
    "Private-Token",
    "X-RapidAPI-Key",
    "-key",
    "-Token",
    "x-",
    "Cookie: ",
    "Set-Cookie: ",
    "cookie",
    "sessionid=",
    "<password>",
    "</password>",
    "<apiKey>",
    "</apiKey>",
    "<",
    ">",
    "</",
    "'password'",
    "'",
    "{'",
    "': '",
    "echo ",
    "echo '",
    "printf ",
    'echo -e "',
    "\\n",
    "\\",
    '"auth"',
    '"auth": "',
    "dXNlcjpwYXNz",
    "==",
    "%",
    "$",
    "getpass(",
    "a.b(",
    # command-line passwords and kubeconfig / npmrc
    "curl ",
    " -u ",
    "--user=",
    "me:pw",
    "sshpass ",
    " -p",
    "redis-cli ",
    " -a ",
    "ldapsearch ",
    " -w ",
    "mysql ",
    "docker login",
    "client-key-data",
    "client-key-data: ",
    "_auth",
    "_auth=",
    # key and config files, command-line flags
    "PuTTY-User-Key-File-3: ",
    "Private-Lines: 2\n",
    "Private-Lines:",
    "Private-MAC: ",
    "AAAAB3Nza",
    "\\n",
    ".pgpass",
    "pgpass ",
    "db:5432:app:app:",
    ":*:",
    "*",
    '<add key="',
    '" value="',
    "DbPassword",
    "<key>",
    "</key>",
    "<string>",
    "</string>",
    "--token ",
    "--api-key=",
    "--client-secret ",
    "--token-file",
    "--",
    # the formats of public scanners (issue 31): split and any-notation pairs, base64 keys, odd-shaped tokens
    "name: ",
    "- name: DB_PASSWORD\n",
    "  value: ",
    '{"name": "API_KEY", "value": "',
    "value",
    "ENV ",
    "ENV DB_PASS ",
    "define('DB_PASSWORD', '",
    ":=",
    " := ",
    "=>",
    " => ",
    '"]',
    "$env:",
    "OPENAI_KEY=",
    "openaiKey",
    "DB_PASS=",
    "MYSQL_PWD",
    "pass",
    "pass:",
    "-passout ",
    "--pass ",
    "default\nlogin me\n",
    "default",
    "\nlogin ",
    "id-token: ",
    "write",
    "false",
    "${{ secrets.X }}",
    "self.token",
    "new_password",
    "OPENAI_API_KEY",
    "./pw.txt",
    "sk_learn_model",
    "am_start",
    "basic troubleshooting.",
    "LS0tLS1CRUdJTi",
    "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlF",
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
    "MTFAKEV5DnTQiVZvWshWayCD7e.bWcoot.7XqOlay141x2BsASysFZr8Jp-y6",
    "Tsa8Q~",
    "sha256~",
    "1//0",
    "_mmk",
    "access_token$production$",
    "AGE-SECRET-KEY-1",
    "GOCSPX-",
    "glpat-AbCdEfGhIjKlMnOpQrSt.0123abcde",
    "webhook.office.com/webhookb2/",
    "X-Goog-Signature=",
    '\\"',
    '{"command": "',
    "\\n",
]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_redact_equals_the_plain_rules(text):
    assert redact(text) == reference_redact(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(texts, max_size=8))
def test_redact_many_equals_redacting_each_text(batch):
    assert redact_many(batch) == [redact(text) for text in batch]


def test_corpora_agree_with_the_plain_rules():
    samples = [text for _, text, _ in CORPUS + HERMES_EXTRA] + FALSE_POSITIVES
    for text in samples:
        assert redact(text) == reference_redact(text), text
    assert redact_many(samples) == [reference_redact(text) for text in samples]
    assert sum(MASK in text for text in redact_many(samples)) >= len(CORPUS)


def test_a_match_reaching_into_the_next_text_does_not_leak_or_spill_over():
    # "token =" ends one text: joined with the next, the rule could read the
    # next text's start as the value; each text must be redacted on its own.
    batch = ["the token =", "### next block", "-----BEGIN RSA PRIVATE KEY-----\nMIIE", "after the key"]
    assert redact_many(batch) == [redact(text) for text in batch]
    assert redact_many(batch)[1] == "### next block" and redact_many(batch)[3] == "after the key"


def test_unterminated_private_key_is_masked_to_the_end_of_its_own_text():
    out = redact_many(["-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9", "next message"])
    assert out == [MASK, "next message"]


def test_literal_heads_of_vendor_alternatives():
    assert literal_head(r"ya29\.[A-Za-z0-9_-]{20,}") == "ya29"
    assert literal_head(r"gh[pousr]_[A-Za-z0-9]{10,}") == "gh"
    assert literal_head(r"abc?d") == "ab"  # an optional last letter is not part of the head
    with pytest.raises(ValueError, match="no literal start"):
        literal_head(r"(?:AKIA|ASIA)[A-Z0-9]{16}")


def test_vendor_keys_after_dots_and_equals_inside_a_run_are_found():
    text = "x.sk-abcdefghij0123 key=ghp_abcdefghij0123 plain_sk-abcdefghij0123"
    assert redact(text) == reference_redact(text) == f"x.{MASK} key={MASK} plain_sk-abcdefghij0123"
