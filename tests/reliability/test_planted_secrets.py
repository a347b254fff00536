"""Planted secrets never reach the summary model, wherever they sit in the conversation.

A corpus of fake credentials in more than 40 formats (generated here from a
seeded random source: none is real) is planted in every place text can leave
the process through the summary prompt: tool outputs, tool-call arguments,
user text, assistant text, the memory provider's context, the /compress
focus and an earlier summary.  Each prompt sent to the (recording) summary
model must hold the planted line's marker and none of the secrets.
"""

from __future__ import annotations

import json
import random
import string

import pytest

from stowage.context_engine.config import load_settings
from stowage.context_engine.engine import StowageEngineCore
from stowage.context_engine.summary import wrap

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
    add("slack-webhook", "post to https://hooks.slack.com/services/{S} now",
        "T" + r(8, upper) + "/B" + r(10, upper) + "/" + r(24))
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
    add("azure-connection-string",
        "DefaultEndpointsProtocol=https;AccountName=fakeacct;AccountKey={S};EndpointSuffix=core.windows.net",
        r(86, b64) + "==")
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
    return items


CORPUS = corpus()
PLACEMENTS = ("tool_output", "tool_output_json", "tool_error_line", "arguments", "user", "assistant", "memory_context", "focus",
              "previous_summary")


def transcript(items, placement: str) -> tuple[list[dict], str, str | None]:
    """Messages with each planted line in ``placement`` (in the summarized window), memory, focus."""
    messages: list[dict] = [{"role": "system", "content": "You are an agent."}]
    if placement == "previous_summary":
        body = "\n".join(f"- PLANT-{i}: {line}" for i, (_, line, _) in enumerate(items))
        messages += [{"role": "user", "content": wrap("## Goal\nEarlier work\n\n## Critical Context\n" + body)},
                     {"role": "assistant", "content": "Continuing."}]
    messages.append({"role": "user", "content": "Please set up the services."})
    for i, (_, line, _) in enumerate(items):
        tagged = f"PLANT-{i}: {line}"
        if placement in ("tool_output", "tool_output_json", "tool_error_line", "arguments"):
            args = {"command": tagged} if placement == "arguments" else {"command": f"step {i}"}
            output = {"tool_output": tagged, "tool_error_line": f"running\nError: PLANT-{i} failed with {line}",
                      "tool_output_json": json.dumps({"output": tagged, "exit_code": 0}),
                      "arguments": "ok"}[placement]
            messages += [{"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "terminal", "arguments": json.dumps(args)}}]},
                {"role": "tool", "tool_call_id": f"c{i}", "name": "terminal", "content": output}]
        elif placement == "user":
            messages += [{"role": "user", "content": tagged}, {"role": "assistant", "content": f"Noted {i}."}]
        elif placement == "assistant":
            messages += [{"role": "assistant", "content": tagged}, {"role": "user", "content": f"Go on {i}."}]
    if messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": "Done."})
    messages += [{"role": "user", "content": "Now summarize where we are."},
                 {"role": "assistant", "content": "We are done with the setup."},
                 {"role": "user", "content": "Thanks, continue."}]
    memory = "\n".join(f"PLANT-{i}: {line}" for i, (_, line, _) in enumerate(items)) \
        if placement == "memory_context" else ""
    focus = f"PLANT-0: {items[0][1]}" if placement == "focus" else None
    return messages, memory, focus


def prompts_for(items, placement: str) -> list[str]:
    prompts: list[str] = []

    def model(prompt: str, runtime: dict) -> str:
        prompts.append(prompt)
        return SUMMARY

    engine = StowageEngineCore(load_settings({"stowage": {"compaction": {"protect_first_n": 1,
                                                                         "protect_last_n": 1}}}),
                               summary_model=model)
    engine.update_model("m", 200_000)
    messages, memory, focus = transcript(items, placement)
    engine.compress(messages, current_tokens=1000, focus_topic=focus, force=True, memory_context=memory)
    return prompts


def test_planted_secrets_never_reach_the_summary_model(figures):
    planted = leaked = 0
    leaks: list[str] = []
    missing: list[str] = []
    for placement in PLACEMENTS:
        # the focus is one line: each format gets its own compaction
        groups = [[item] for item in CORPUS] if placement == "focus" else [CORPUS]
        for items in groups:
            prompts = prompts_for(items, placement)
            text = "\n".join(prompts)
            for i, (name, _, secret) in enumerate(items):
                planted += 1
                shown_whole = placement != "tool_output_json" or len(
                    json.dumps({"output": f"PLANT-{i}: {items[i][1]}", "exit_code": 0})) < 200
                if f"PLANT-{i}" not in text and shown_whole:  # longer outputs appear as their size only
                    missing.append(f"{placement}/{name}")
                if secret in text:
                    leaked += 1
                    leaks.append(f"{placement}/{name}")
    figures.update(formats=len(CORPUS), placements=len(PLACEMENTS), planted=planted, leaked=leaked,
                   not_in_prompt=len(missing))
    assert len(CORPUS) >= 40
    assert not missing, f"planted lines that never reached the prompt (the test would prove nothing): {missing[:10]}"
    assert not leaks, f"{len(leaks)} secrets reached the summary model: {leaks[:30]}"
