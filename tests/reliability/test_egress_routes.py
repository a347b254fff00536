"""Secrets that reached the summary model or the stored summary because text was cut before it was masked.

Issue 31: a long message was cut to head and tail before masking (a private
key lost its BEGIN line and its body was sent), the fallback summary clipped,
reflowed and re-quoted text before masking (an indented YAML password, a
JSON password in call arguments), and a leaked fallback summary came back
as the next prompt's previous summary.  Each case plants one fake secret in
a format the rules know, placed so that a cut, a reflow or a quote breaks it
(the secrets are random letters and digits, generated here: none is real).
A leak is any 10 characters of the secret in what the summary model
received, in the summary left in the history, or in the summary log.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass

import pytest

from stowage.context_engine.chat.markers import SUMMARY_MARKER
from stowage.context_engine.chat.messages import message_text
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.records.summary_log import read_summaries
from stowage.context_engine.summary.reply import SummaryFailure, unwrap, wrap

pytestmark = pytest.mark.reliability
SUMMARY = "## Goal\nG\n\n## Next Steps\n- go"
ROUTES = ("user message", "tool output", "call arguments", "fallback", "previous summary")
_RNG = random.Random(31)


def fake(n: int = 24) -> str:
    """A fake secret: random letters and digits (no 10 of them occur anywhere else in these tests)."""
    return "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(n))


def fragments(secret: str, size: int = 10) -> set[str]:
    """Every run of ``size`` characters of the secret's letter-and-digit runs: a recognisable part of it."""
    runs = "".join(c if c.isalnum() else " " for c in secret).split()
    return {run[i : i + size] for run in runs if len(run) >= size for i in range(len(run) - size + 1)}


def leaked(secret: str, text: str) -> bool:
    return any(piece in text for piece in fragments(secret))


def pem(lines: int = 48) -> tuple[str, str]:
    body = "\n".join(fake(64) for _ in range(lines))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----", body


def url(password: str) -> str:
    return f"postgres://app:{password}@db.internal:5432/app"


def across(before: str, cut: int, password: str, after: str = "", shown: int = 14) -> str:
    """``before``, padding, then a URL whose ``password`` has its first ``shown`` characters before ``cut``."""
    prefix = " " + url(password).split(password)[0]
    return before + "x" * (cut - shown - len(prefix) - len(before)) + " " + url(password) + after


def call(cid: str, name: str, arguments: dict) -> list[dict]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            ],
        }
    ]


def tool(cid: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "name": "terminal", "content": content}


def conversation(middle: list[dict], *, before: list[dict] | None = None) -> list[dict]:
    return (
        [{"role": "system", "content": "You are an agent."}]
        + (before or [])
        + [{"role": "user", "content": "Please set up the services."}]
        + middle
        + [
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "Now continue."},
            {"role": "assistant", "content": "Continuing."},
            {"role": "user", "content": "Thanks, go on."},
        ]
    )


@dataclass(frozen=True)
class Case:
    route: str
    name: str
    secret: str
    messages: list[dict]
    model_fails: bool = False


def _cases() -> list[Case]:
    cases: list[Case] = []
    key, body = pem()
    cases.append(
        Case(
            "user message",
            "private key at the end of a long message (its BEGIN line in the part cut out)",
            body,
            conversation([{"role": "user", "content": "x" * 4000 + "\nhere is the key:\n" + key + "\n"}]),
        )
    )
    pw = fake()
    cases.append(
        Case(
            "user message",
            "URL password across the head cut of a long message",
            pw,
            conversation([{"role": "user", "content": across("note ", 3000, pw, " " + "y" * 5000)}]),
        )
    )
    pw = fake()
    newest = across("the newest request ", 3000, pw, " and more")
    cases.append(
        Case(
            "user message",
            "URL password across the cut of the newest request quoted in the summary",
            pw,
            conversation([])[:-1] + [{"role": "user", "content": newest}],
        )
    )
    pw = fake()
    line = across("Error: could not connect to the primary database ", 119, pw)
    cases.append(
        Case(
            "tool output",
            "URL password across the cut of a long output's error line (its verdict)",
            pw,
            conversation(call("t1", "terminal", {"command": "migrate"}) + [tool("t1", "z " * 200 + "\n" + line)]),
        )
    )
    pw = fake()
    line = across("Error: connection refused by ", 199, pw)
    cases.append(
        Case(
            "tool output",
            "URL password across the clip of an error line in the fallback",
            pw,
            conversation(call("t1", "terminal", {"command": "migrate"}) + [tool("t1", line)]),
            model_fails=True,
        )
    )
    pw = fake()
    command = across("psql ", 1200 - len('{"command": "'), pw, " && echo " + "y" * 200)
    cases.append(
        Case(
            "call arguments",
            "URL password across the cut of long call arguments",
            pw,
            conversation(call("t1", "terminal", {"command": command}) + [tool("t1", "ok")]),
        )
    )
    pw = fake(32)
    cases.append(
        Case(
            "call arguments",
            "JSON password across the gist's cut of a nested argument (fallback)",
            pw,
            conversation(
                call("t1", "deploy", {"config": {"host": "db.internal", "password": pw}}) + [tool("t1", "ok")]
            ),
            model_fails=True,
        )
    )
    pw = fake()
    cases.append(
        Case(
            "call arguments",
            "indented YAML password in a string argument, reflowed by the gist (fallback)",
            pw,
            conversation(
                call("t1", "write_file", {"path": "cfg.yml", "content": f"db:\n  password: {pw}\n"})
                + [tool("t1", "ok")]
            ),
            model_fails=True,
        )
    )
    pw = fake()
    cases.append(
        Case(
            "fallback",
            "indented YAML password in a user request, reflowed onto one line",
            pw,
            conversation([{"role": "user", "content": f"deploy config:\n  db:\n    password: {pw}\n"}]),
            model_fails=True,
        )
    )
    pw = fake()
    cases.append(
        Case(
            "fallback",
            "URL password across the clip of the last assistant words",
            pw,
            conversation([])[:-2]
            + [
                {"role": "assistant", "content": across("I will connect with ", 599, pw)},
                {"role": "user", "content": "Right."},
                {"role": "assistant", "content": "Okay."},
                {"role": "user", "content": "Thanks, go on."},
            ],
            model_fails=True,
        )
    )
    pw = fake()
    carried = "## Goal\nEarlier work\n\n## Critical Context\n- "
    previous = wrap(carried + across("", 3000 - len(carried), pw))
    cases.append(
        Case(
            "previous summary",
            "URL password across the cut of the carried-over previous summary (fallback)",
            pw,
            conversation([], before=[{"role": "user", "content": previous}, {"role": "assistant", "content": "Ok."}]),
            model_fails=True,
        )
    )
    return cases


CASES = _cases()


def compaction(messages: list[dict], *, fails: bool, home, session: str = "s1", engine=None):
    """One forced compaction through the engine: the prompts sent, the history after, the summary log."""
    prompts: list[str] = []

    def model(prompt: str, runtime: dict, timeout: float | None = None) -> str:
        prompts.append(prompt)
        if fails:
            raise SummaryFailure("http", "HTTP 500")
        return SUMMARY

    if engine is None:
        engine = StowageEngineCore(
            load_settings({"stowage": {"compaction": {"protect_first_n": 1, "protect_last_n": 1}}}), summary_model=model
        )
        engine.update_model("m", 200_000)
        engine.on_session_start(session, hermes_home=str(home))
    engine.summary_model = model
    engine.state.governor.clear_cooldown()
    out = engine.compress(messages, current_tokens=1000, force=True)
    # the summary bodies only: a kept tail message merged after one is the conversation itself
    summaries = "\n".join(unwrap(message_text(m)) or "" for m in out if SUMMARY_MARKER in message_text(m))
    log = "\n".join(r["body"] for r in read_summaries(engine.state.store.root, session)[0])
    return engine, prompts, out, summaries, log


@pytest.mark.parametrize("case", CASES, ids=[f"{c.route}: {c.name}" for c in CASES])
def test_a_secret_broken_by_a_cut_reflow_or_quote_reaches_neither_the_model_nor_the_store(case: Case, tmp_path):
    _, prompts, _, summary, log = compaction(case.messages, fails=case.model_fails, home=tmp_path)
    assert prompts and summary and log, "the planted window was summarized and logged"
    assert not leaked(case.secret, "\n".join(prompts)), "the secret reached the summary model"
    assert not leaked(case.secret, summary), "the secret entered the history"
    assert not leaked(case.secret, log), "the secret entered the summary log"


def chained_fallback_leaks(home) -> bool:
    """The chain of issue 31: a fallback summary kept a reflowed YAML password; once the model was back,
    the next prompt's PREVIOUS SUMMARY carried it.  True when the secret reached the model or the store."""
    pw = fake()
    first = conversation([{"role": "user", "content": f"deploy config:\n  db:\n    password: {pw}\n"}])
    engine, _, history, _, _ = compaction(first, fails=True, home=home, session="chain")
    later = history + [{"role": "assistant", "content": "More work."}, {"role": "user", "content": "And now?"}]
    later += [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "Good, go on."}]
    _, prompts, _, summary, log = compaction(later, fails=False, home=home, session="chain", engine=engine)
    assert prompts and "PREVIOUS SUMMARY" in prompts[-1], "the second compaction updated the fallback summary"
    return leaked(pw, prompts[-1]) or leaked(pw, summary) or leaked(pw, log)


def test_a_fallback_summary_never_brings_a_secret_back_as_the_next_previous_summary(tmp_path):
    assert not chained_fallback_leaks(tmp_path)


def gist_cut(password: str) -> list[tuple[str, dict]]:
    """Call arguments whose gist (values cut at 60 characters) shows 14 to 20 characters of ``password``
    and not what marks it as one: a URL password before its ``@``, a JSON password before its closing quote."""
    return [
        ("URL password", {"command": across("psql ", 59, password, " -c 'select 1'"), "timeout": 30}),
        ("JSON password", {"config": {"host": "db.internal.example", "password": password}, "dry_run": False}),
        # over prune.max_args_chars (500): the history keeps the call with its strings cut at 250 characters
        ("URL password in cut arguments", {"command": across("psql ", 250, password, " && echo " + "y" * 400)}),
    ]


def pruned_stub_leaks(home, kind: str) -> bool:
    """A tool output pruned at one compaction leaves a stub that gists its call's arguments (and a call whose
    arguments are too long keeps them cut); the next compaction sends both to the summary model.  True when the
    secret reached the model or the store."""
    pw = fake(32)
    arguments = dict(gist_cut(pw))[kind]
    work = [{"role": "user", "content": "Check the database."}]
    work += call("t9", "terminal", arguments) + [tool("t9", "row\n" * 300)]
    work += call("t10", "terminal", {"command": "ls"}) + [tool("t10", "file\n" * 300)]
    engine, _, history, _, _ = compaction(
        conversation([]) + work + [{"role": "assistant", "content": "Checked."}], fails=False, home=home, session="st"
    )
    stubs = [message_text(m) for m in history if m.get("role") == "tool"]
    assert stubs and all(s.startswith("[stowage:") for s in stubs), "the first compaction pruned the outputs"
    later = history + [{"role": "user", "content": "Next task."}, {"role": "assistant", "content": "On it."}]
    later += [{"role": "user", "content": "Go."}]
    _, prompts, _, summary, log = compaction(later, fails=False, home=home, session="st", engine=engine)
    assert any("terminal(" in p for p in prompts), "the second compaction summarized the stubs"
    return leaked(pw, "\n".join(prompts)) or leaked(pw, summary) or leaked(pw, log)


STUB_KINDS = [kind for kind, _ in gist_cut("Example0Password0Only0For0Names")]


@pytest.mark.parametrize("kind", STUB_KINDS)
def test_a_secret_in_call_arguments_never_reaches_the_model_through_a_pruned_outputs_stub(kind: str, tmp_path):
    assert not pruned_stub_leaks(tmp_path, kind)


def test_the_prompt_is_sealed_as_it_leaves_on_every_route(tmp_path):
    """The summary call every route makes (compaction, prepared ahead, replay) masks the exact prompt once more:
    a prompt built without masking still leaves masked."""
    received: list[str] = []
    engine = StowageEngineCore(
        load_settings({}), summary_model=lambda prompt, runtime, timeout=None: received.append(prompt) or ""
    )
    engine.update_model("m", 200_000)
    pw = fake()
    engine.state.summarizer(engine.limits)(f"TRANSCRIPT\ndb:\n  password: {pw}\n\nconnect to {url(fake())}")
    assert received and not leaked(pw, received[0]) and "TRANSCRIPT" in received[0]


def test_planted_secrets_leaked_per_route(figures, tmp_path):
    """The closing note's figures: secrets planted per route, and how many reached the model or the store."""
    planted = dict.fromkeys(ROUTES, 0)
    leaks = dict.fromkeys(ROUTES, 0)
    for index, case in enumerate(CASES):
        _, prompts, _, summary, log = compaction(
            case.messages, fails=case.model_fails, home=tmp_path, session=f"s{index}"
        )
        planted[case.route] += 1
        leaks[case.route] += leaked(case.secret, "\n".join(prompts + [summary, log]))
    planted["previous summary"] += 1
    leaks["previous summary"] += chained_fallback_leaks(tmp_path / "chain")
    for kind in STUB_KINDS:
        planted["call arguments"] += 1
        leaks["call arguments"] += pruned_stub_leaks(tmp_path / kind.replace(" ", "-"), kind)
    figures.update({f"{route} planted": planted[route] for route in ROUTES})
    figures.update({f"{route} leaked": leaks[route] for route in ROUTES})
    assert all(planted.values())
    assert not any(leaks.values()), leaks
