"""Planted secrets never reach the summary model, wherever they sit in the conversation.

A corpus of fake credentials in more than 40 formats (generated here from a
seeded random source: none is real) is planted in every place text can leave
the process through the summary prompt: tool outputs, tool-call arguments,
user text, assistant text, the memory provider's context, the /compress
focus and an earlier summary.  Each prompt sent to the (recording) summary
model must hold the planted line's marker and none of the secrets.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string

import pytest

from stowage.context_engine.chat.markers import SUMMARY_MARKER
from stowage.context_engine.chat.messages import message_text
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.summary.reply import SummaryFailure, wrap

pytestmark = pytest.mark.reliability
SUMMARY = "## Goal\nG\n\n## Next Steps\n- go"


def corpus(seed: int = 20261124) -> list[tuple[str, str, str]]:
    """``(format, line, secret)``: the line holds the secret in that format's usual notation."""
    rng = random.Random(seed)
    alnum = string.ascii_letters + string.digits
    upper, hexdigits, b64 = string.ascii_uppercase + string.digits, "0123456789abcdef", alnum + "+/"

    def r(n: int, chars: str = alnum) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    items: list[tuple[str, str, str]] = []

    def add(name: str, template: str, secret: str) -> None:
        items.append((name, template.replace("{S}", secret), secret))

    add("openai", "key is {S} ok", "sk-proj-FAKE" + r(40))
    add("anthropic", "ANTHROPIC={S}", "sk-ant-api03-FAKE" + r(60))
    add("stripe", "stripe {S}", "sk_live_FAKE" + r(24))
    add("github-classic", "gh token {S}", "ghp_FAKE" + r(32))
    add("github-fine-grained", "{S}", "github_pat_FAKE" + r(60))
    add("gitlab-pat-header", "curl -H 'PRIVATE-TOKEN: {S}' x", "glpat-FAKE" + r(16))
    add("gitlab-pat-bare", "remote uses {S}", "glpat-" + r(20))
    add("gitlab-pat-after-dash", "glab auth login --token-{S}", "glpat-" + r(20))
    add("openai-after-dash", "export KEY=-{S}", "sk-proj-FAKE" + r(40))
    add("gitlab-trigger", "trigger {S}", "glptt-" + r(40, hexdigits))
    add("gitlab-deploy", "deploy token {S} here", "gldt-" + r(20))
    add("gitlab-runner", "runner registration {S}", "glrt-" + r(20))
    add("gitlab-url", "git clone https://oauth2:{S}@gitlab.example.com/x.git", "glpat-" + r(20))
    add("slack-bot", "slack {S}", "xoxb-1234567890-FAKE" + r(20))
    add(
        "slack-webhook",
        "post to https://hooks.slack.com/services/{S} now",
        "T" + r(8, upper) + "/B" + r(10, upper) + "/" + r(24),
    )
    add("discord-webhook", "https://discord.com/api/webhooks/123456789012345678/{S}", r(68, alnum + "_-"))
    add("aws-access-key-id", "aws id {S}", "AKIA" + r(16, upper))
    add("aws-secret-ini", "aws_secret_access_key = {S}", r(40, b64))
    add("aws-secret-env", "export AWS_SECRET_ACCESS_KEY={S}", r(40, b64))
    add("aws-secret-json", '{"SecretAccessKey": "{S}"}', r(40, b64))
    add("aws-secret-cli", "aws configure set aws_secret_access_key {S}", r(40, b64))
    add("aws-secret-yaml", "  aws_secret_access_key: {S}", r(40, b64))
    add("aws-secret-table", "| SecretAccessKey | {S} |", r(40, b64))
    add("google-api-key", "{S}", "AIza" + r(35, alnum + "_-"))
    add("google-oauth", "ya29.{S}", r(40, alnum + "_-"))
    add("jwt", "cookie {S}", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0." + r(43, alnum + "_-"))
    add("bearer", "Authorization: Bearer {S}", r(40))
    add("basic", "curl -H 'Authorization: Basic {S}'", r(24) + "==")
    add("url-password", "postgres://app:{S}@db.internal:5432/x", "FAKEpw" + r(12))
    add(
        "azure-connection-string",
        "DefaultEndpointsProtocol=https;AccountName=fakeacct;AccountKey={S};EndpointSuffix=core.windows.net",
        r(86, b64) + "==",
    )
    add("azure-sas", "https://x.blob.core.windows.net/c?sv=2022-11-02&sig={S}", r(43) + "%3D")
    add("mysql-p", "mysql -u root -p{S} shop", "FAKEpw" + r(10))
    add("mysql-p-quoted", "mysql -uroot -p'{S}' -h db", "FAKEpw" + r(10))
    add("mysqldump-password", "mysqldump --password={S} db", "FAKEpw" + r(10))
    add("cli-password-flag", "tool --password {S} -h db", "FAKEpw" + r(10))
    add("yaml-indented", "database:\n    password: {S}\n    user: app", "FAKEpw" + r(12))
    add("yaml-indented-comment", "db:\n  password: {S}  # prod\n", "FAKEpw" + r(12))
    add("yaml-indented-quoted", 'db:\n  password: "{S}"\n', "FAKE pw " + r(8))
    add("yaml-crlf", "db:\r\n  password: {S}\r\n  user: x", "FAKEpw" + r(12))
    add("env-password", "DB_PASSWORD={S}", "FAKEpw" + r(12))
    add("json-password", '{"password": "{S}"}', "FAKEpw" + r(12))
    add("json-api-key", '{"api_key": "{S}"}', r(32))
    add("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\n{S}\n-----END OPENSSH PRIVATE KEY-----", r(64, b64))
    add("query-token", "GET /cb?access_token={S}&x=1", r(30))
    add("x-api-key", "x-api-key: {S}", r(32))
    add("telegram-bot", "bot 123456789:{S}", "AA" + r(33, alnum + "_-"))
    add("npm", "//registry.npmjs.org/:_authToken={S}", "npm_" + r(36))
    add("pypi", "password = {S}", "pypi-AgEIcHlwaS5vcmcFAKE" + r(40))
    add("huggingface", "{S}", "hf_" + r(34))
    add("sendgrid", "{S}", "SG." + r(22) + "." + r(43))
    add("twilio", "sid {S}", "AC" + r(32, hexdigits))
    add("digitalocean", "{S}", "dop_v1_" + r(64, hexdigits))
    add("shopify", "{S}", "shpat_" + r(32, hexdigits))
    add("netrc", "machine api.example.com login me password {S}", "FAKEpw" + r(12))
    add("pgpassword", "PGPASSWORD={S} psql", "FAKEpw" + r(10))
    add("docker-login", "docker login -u me -p {S} registry", "FAKEpw" + r(10))
    # issue 23: structured formats that reached the summary model
    add(
        "pgp-private-key-block",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{S}\n=" + r(4) + "\n-----END PGP PRIVATE KEY BLOCK-----",
        r(64, b64),
    )
    add("redis-empty-user", "redis-cli -u redis://:{S}@cache.internal:6379/0 ping", "FAKEpw" + r(12))
    add("url-password-with-at", "postgres://app:{S}@db.internal:5432/app", "FAKEpw" + r(6) + "@" + r(10))
    add("odbc-pwd", "Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=sa;Pwd={S};Encrypt=yes", "FAKEpw" + r(12))
    add("odbc-pwd-braced", "Server=db;UID=sa;PWD={{S}};", "FAKEpw;" + r(12))
    add("ado-password-spaces", "Server=db;User Id=sa;Password={S};", "FAKE pw " + r(10))
    add("vault-token-header", "curl -H 'X-Vault-Token: {S}' https://vault.internal:8200/v1/secret/db", "hvs." + r(24))
    add("vault-token-header-plain", "curl -H 'X-Vault-Token: {S}' https://vault.internal:8200/v1/x", "FAKE" + r(20))
    add(
        "xml-password",
        "<server><id>nexus</id><username>dev</username><password>{S}</password></server>",
        "FAKEpw" + r(12),
    )
    add("python-dict-password", "connect(**{'user': 'bob', 'password': '{S}'})", "FAKEpw" + r(12))
    add("js-object-token", 'client = new Api({ token: "{S}", retries: 3 })', "FAKE" + r(20))
    add(
        "docker-config-auth",
        '{"auths": {"https://index.docker.io/v1/": {"auth": "{S}"}}}',
        base64.b64encode(("me:FAKEpw" + r(12)).encode()).decode(),
    )
    add("stripe-webhook-secret", "stripe listen: your webhook signing secret is {S}", "whsec_" + r(32))
    add("shell-quoted-yaml", "echo '  password: {S}' > .env", "FAKEpw-" + r(12))
    add("printf-yaml", "printf 'db:\\n  password: {S}\\n' > config.yml", "FAKEpw" + r(12))
    add("cookie-header", "curl -H 'Cookie: sessionid={S}; csrftoken=abc' https://app.internal/", "FAKE" + r(24))
    add("set-cookie", "< Set-Cookie: session={S}; Path=/; HttpOnly", "FAKE" + r(24))
    add("json-cookie", '{"Cookie": "connect.sid={S}"}', "FAKE" + r(24))
    add("curl-user", "curl -u admin:{S} https://api.internal/v1/items", "FAKEpw" + r(12))
    add("sshpass", "sshpass -p '{S}' ssh deploy@web1 uptime", "FAKEpw" + r(12))
    add("redis-cli-a", "redis-cli -h cache -a {S} ping", "FAKEpw" + r(12))
    add("ldap-w", "ldapsearch -x -D cn=admin,dc=example,dc=org -w {S} -b dc=example,dc=org", "FAKEpw" + r(12))
    add("kubeconfig-client-key-data", "users:\n- name: admin\n  user:\n    client-key-data: {S}", r(64, b64))
    add("npmrc-auth", "//registry.example.com/:_auth={S}", base64.b64encode(("me:FAKEpw" + r(10)).encode()).decode())
    # key and config files, command-line flags (redact_formats.py)
    add(
        "putty-private-key",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\n"
        "Private-Lines: 2\n{S}\nPrivate-MAC: " + r(16, hexdigits),
        "\n".join(("AAAAI" + r(27, b64), r(16, b64) + "=")),
    )
    add("pgpass-echo", "echo 'db.internal:5432:app:app:{S}' >> ~/.pgpass", "FAKEpw" + r(12))
    add("pgpass-cat", "$ cat ~/.pgpass\nlocalhost:5432:*:postgres:{S}", "FAKEpw" + r(12))
    add("dotnet-appsetting", '<appSettings><add key="SmtpPassword" value="{S}" /></appSettings>', "FAKEpw" + r(12))
    add(
        "dotnet-connection-string",
        '<add name="Db" connectionString="Server=db;User Id=sa;Password={S}" providerName="System.Data.SqlClient" />',
        "FAKE pw " + r(10),
    )
    add("plist-password", "<dict>\n\t<key>password</key>\n\t<string>{S}</string>\n</dict>", "FAKEpw" + r(12))
    add("cli-token-flag", "gh auth login --hostname ghe.internal --token {S}", "FAKE" + r(24))
    add("cli-token-equals", "deploy --token={S} --env prod", "FAKE" + r(24))
    add("cli-api-key-flag", "llm --api-key {S} 'hello'", "FAKE" + r(32))
    add("cli-client-secret-quoted", "az login --service-principal --client-secret '{S}'", "FAKE pw " + r(16))
    add("cli-db-password-flag", "migrate --db-password {S} up", "FAKEpw" + r(12))
    return items


def leaks_in(secret: str, text: str) -> bool:
    """The secret, or a piece of it of 8 or more characters that no other planted line holds, is in ``text``.

    A partial mask leaks too (``p@ss`` masked up to its ``@``); pieces shared
    with other lines (a fixed JWT header, a digit run) prove nothing.
    """
    return secret in text or any(piece in text for piece in _UNIQUE_PIECES[secret])


def _unique_pieces(items: list[tuple[str, str, str]]) -> dict[str, list[str]]:
    pieces: dict[str, list[str]] = {}
    for _, line, secret in items:
        others = [other for _, other, _ in items if other != line]
        pieces[secret] = [
            piece
            for piece in re.split(r"[^A-Za-z0-9]+", secret)
            if len(piece) >= 8 and not any(piece in other for other in others)
        ]
    return pieces


CORPUS = corpus()
_UNIQUE_PIECES = _unique_pieces(CORPUS)
# the formats a third attack found reaching the model (issue 23) start here
FORMATS_BEFORE_ISSUE_23 = [name for name, _, _ in CORPUS].index("pgp-private-key-block")
PLACEMENTS = (
    "tool_output",
    "tool_output_json",
    "tool_error_line",
    "arguments",
    "user",
    "assistant",
    "memory_context",
    "focus",
    "previous_summary",
)


def transcript(items, placement: str) -> tuple[list[dict], str, str | None]:
    """Messages with each planted line in ``placement`` (in the summarized window), memory, focus."""
    messages: list[dict] = [{"role": "system", "content": "You are an agent."}]
    if placement == "previous_summary":
        body = "\n".join(f"- PLANT-{i}: {line}" for i, (_, line, _) in enumerate(items))
        messages += [
            {"role": "user", "content": wrap("## Goal\nEarlier work\n\n## Critical Context\n" + body)},
            {"role": "assistant", "content": "Continuing."},
        ]
    messages.append({"role": "user", "content": "Please set up the services."})
    for i, (_, line, _) in enumerate(items):
        tagged = f"PLANT-{i}: {line}"
        if placement in ("tool_output", "tool_output_json", "tool_error_line", "arguments"):
            args = {"command": tagged} if placement == "arguments" else {"command": f"step {i}"}
            output = {
                "tool_output": tagged,
                "tool_error_line": f"running\nError: PLANT-{i} failed with {line}",
                "tool_output_json": json.dumps({"output": tagged, "exit_code": 0}),
                "arguments": "ok",
            }[placement]
            messages += [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"c{i}",
                            "type": "function",
                            "function": {"name": "terminal", "arguments": json.dumps(args)},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": f"c{i}", "name": "terminal", "content": output},
            ]
        elif placement == "user":
            messages += [{"role": "user", "content": tagged}, {"role": "assistant", "content": f"Noted {i}."}]
        elif placement == "assistant":
            messages += [{"role": "assistant", "content": tagged}, {"role": "user", "content": f"Go on {i}."}]
    if messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": "Done."})
    messages += [
        {"role": "user", "content": "Now summarize where we are."},
        {"role": "assistant", "content": "We are done with the setup."},
        {"role": "user", "content": "Thanks, continue."},
    ]
    memory = (
        "\n".join(f"PLANT-{i}: {line}" for i, (_, line, _) in enumerate(items)) if placement == "memory_context" else ""
    )
    focus = f"PLANT-0: {items[0][1]}" if placement == "focus" else None
    return messages, memory, focus


def compaction(items, placement: str, reply=None) -> tuple[list[str], str]:
    """One real compaction of the planted transcript: the prompts the model received and the history's summary.

    ``reply(prompt)`` is the model's answer (default: a fixed summary); it may
    raise to send the compaction to the fallback summary.
    """
    prompts: list[str] = []

    def model(prompt: str, runtime: dict, timeout: float | None = None) -> str:
        prompts.append(prompt)
        return reply(prompt) if reply is not None else SUMMARY

    engine = StowageEngineCore(
        load_settings({"stowage": {"compaction": {"protect_first_n": 1, "protect_last_n": 1}}}), summary_model=model
    )
    engine.update_model("m", 200_000)
    messages, memory, focus = transcript(items, placement)
    out = engine.compress(messages, current_tokens=1000, focus_topic=focus, force=True, memory_context=memory)
    summaries = [message_text(m) for m in out if SUMMARY_MARKER in message_text(m)]
    return prompts, "\n".join(summaries)


def test_planted_secrets_never_reach_the_summary_model(figures):
    planted = leaked = 0
    leaks: list[str] = []
    missing: list[str] = []
    for placement in PLACEMENTS:
        # the focus is one line: each format gets its own compaction
        groups = [[item] for item in CORPUS] if placement == "focus" else [CORPUS]
        for items in groups:
            prompts, _ = compaction(items, placement)
            text = "\n".join(prompts)
            for i, (name, _, secret) in enumerate(items):
                planted += 1
                shown_whole = (
                    placement != "tool_output_json"
                    or len(json.dumps({"output": f"PLANT-{i}: {items[i][1]}", "exit_code": 0})) < 200
                )
                if f"PLANT-{i}" not in text and shown_whole:  # longer outputs appear as their size only
                    missing.append(f"{placement}/{name}")
                if leaks_in(secret, text):
                    leaked += 1
                    leaks.append(f"{placement}/{name}")
    formats_leaked = len({leak.split("/", 1)[1] for leak in leaks})
    figures.update(
        formats=len(CORPUS),
        formats_issue23=len(CORPUS) - FORMATS_BEFORE_ISSUE_23,
        placements=len(PLACEMENTS),
        planted=planted,
        leaked=leaked,
        formats_leaked=formats_leaked,
        not_in_prompt=len(missing),
    )
    assert len(CORPUS) >= 70
    assert not missing, f"planted lines that never reached the prompt (the test would prove nothing): {missing[:10]}"
    assert not leaks, f"{len(leaks)} secrets reached the summary model: {leaks[:30]}"


def test_a_summary_quoting_secrets_or_the_fallback_summary_keeps_none_in_the_history(figures):
    """What enters the history (and the summary log) is masked too: a model reply that quotes the secrets
    (as a model that saw them elsewhere would), and the fallback summary built from the planted window."""
    quoted = "\n".join(f"- {line}" for _, line, _ in CORPUS)

    def quoting(prompt: str) -> str:
        return SUMMARY + "\n\n## Critical Context\n" + quoted

    def failing(prompt: str) -> str:
        raise SummaryFailure("http", "HTTP 500")

    leaks: list[str] = []
    for reply, placements in (
        (quoting, ("tool_output",)),
        (failing, ("tool_output", "user", "assistant", "arguments", "tool_error_line")),
    ):
        for placement in placements:
            prompts, summary = compaction(CORPUS, placement, reply)
            assert prompts and summary, "the compaction summarized the planted window"
            if reply is failing:
                assert "without the summary model" in summary
            leaks += [f"{reply.__name__}/{placement}/{name}" for name, _, secret in CORPUS if leaks_in(secret, summary)]
    figures.update(formats=len(CORPUS), leaked_into_history=len(leaks))
    assert not leaks, f"{len(leaks)} secrets entered the history: {leaks[:30]}"


# Ordinary text near the secret formats (code, prose, URLs without credentials, git output and hashes, public
# keys and certificates, headers that carry no secret): it must reach the summary model exactly as written.
ORDINARY = [
    # code
    'password = getpass.getpass("Password: ")',
    "def check_password(pw: str) -> bool:\n    return bcrypt.checkpw(pw, stored)",
    'print(f"token: {token}")',
    'log.info("token: %s", masked)',
    'input("Password: ")',
    "headers = {'Authorization': auth_header, 'token': token}",
    "config = {'password': os.environ['DB_PASSWORD']}",
    "opts = {password: process.env.DB_PASSWORD}",
    'if (!password) { throw new Error("password: required"); }',
    "cd $PWD && ls",
    "PWD=/home/dev/project\nOLDPWD=/home/dev\nSHELL=/bin/bash",
    "echo $PWD; pwd",
    "export PATH=$PWD/bin:$PATH; make",
    'std::string token_type = "bearer";',
    '<passwordPolicy minLength="12"/>',
    '<token id="1"><word>hello</word></token>',
    "<tokenCount>42</tokenCount>",
    "<keyName>primary</keyName>",
    "Cookie handling is done by the browser; set-cookie headers are parsed on response.",
    "the cookie: chocolate chip",
    '"auth": "oauth2"',
    '{"auth": "basic", "credsStore": "desktop"}',
    '{"auths": {"ghcr.io": {}}, "credsStore": "osxkeychain"}',
    # prose
    "Reset your password: open the settings page and choose a new one.",
    "The password: field must not be empty.",
    "Use X-Request-Id and X-Forwarded-For headers for tracing.",
    "Content-Type: application/json\nAccept: */*\nX-Request-Id: 8f14e45f",
    "The cache-key: path plus query string.",
    "Connection string: Server=db;Database=app;Trusted_Connection=yes;",
    "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433;Database=app;Encrypt=yes;",
    # URLs without credentials
    "https://example.com:8443/path?q=1&page=2",
    "redis://localhost:6379/0",
    "postgres://db.internal:5432/app",
    "http://[::1]:8080/health",
    "git@github.com:org/repo.git",
    "ssh://git@github.com/org/repo.git",
    "mailto:someone@example.com",
    "https://user@example.com/repo.git",
    "see https://example.com/a:b/c@d",
    '{"url": "http://x:1", "email": "y@z.com"}',
    '{"url":"http://x:1","email":"y@z.com"}',
    # git output and hashes
    "commit 3f2a9c1b7e4d5a6f8091a2b3c4d5e6f708192a3b\nAuthor: Jane <jane@example.com>\nDate:   Mon Nov 24",
    "Merge: a1b2c3d e4f5a6b",
    "diff --git a/x.py b/x.py\nindex 83db48f..bf269f4 100644",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBGV1\n-----END PGP PUBLIC KEY BLOCK-----",
    "-----BEGIN PGP SIGNATURE-----\n\niQIzBAAB\n-----END PGP SIGNATURE-----",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "whsec is the prefix Stripe uses for webhook signing secrets",
    "max-tokens: 4096\ntemperature: 0.2",
    "X-RateLimit-Remaining: 42",
    # near-misses of the key-file, config-file and flag formats
    "Private-Lines: 0",
    "PuTTY-User-Key-File-3: ssh-ed25519\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIFAKEpublic",
    "db.internal:5432:app:app:readonly",
    "12:30:45:000:INFO worker started",
    "Put one line per server in ~/.pgpass: hostname:port:database:username:password",
    '<add key="PasswordMinLength" value="12" />',
    '<add key="TokenLifetime" value="3600" />',
    "<key>PasswordHint</key>\n<string>the dog's name</string>",
    "<key>CFBundleName</key>\n<string>Stowage</string>",
    "pass --token to the CLI, or use --token-file ./token.txt",
    "llm --max-tokens 4096 --api-key-env OPENAI_API_KEY",
    "docker login --password-stdin < pw.txt",
    "vault login --token $VAULT_TOKEN",
]


def test_ordinary_text_reaches_the_summary_model_untouched(figures):
    changed: list[str] = []
    for placement in ("tool_output", "user"):
        items = [(f"ordinary-{i}", text, "") for i, text in enumerate(ORDINARY)]
        prompts, _ = compaction(items, placement)
        prompt = "\n".join(prompts)
        changed += [f"{placement}: {text!r}" for text in ORDINARY if text not in prompt]
    figures.update(ordinary_samples=len(ORDINARY), placements=2, changed=len(changed))
    assert len(ORDINARY) >= 40
    assert not changed, f"{len(changed)} ordinary samples were altered on their way to the model: {changed[:10]}"
