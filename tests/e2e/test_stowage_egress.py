"""Secrets broken by a cut or a quote never leave through the real host (issue 31, the egress gate).

Two sessions against the scripted model server.  In the first, a long user
message ends with a private key whose BEGIN line falls in the part the
transcript cuts out: the body lines used to reach the summary model.  In
the second, the summary model fails and the fallback summary lists a tool
call whose arguments hold a JSON password (cut by the argument gist) and an
indented YAML password (reflowed onto one line): both used to enter the
history and the summary log.  Neither may reach a summary request the
server recorded, the summary in the next main request, nor the summary log.
The secrets are built here from fixed fake characters; none is real.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import script_big_turn, script_warm_up, stowage_home

pytestmark = pytest.mark.e2e

SUMMARY = "## Goal\nInspect the big outputs (EGRESS-SUMMARY).\n\n## Next Steps\n- continue"
KEY_LINES = [f"FAKEKEY{i:02d}" + "Qz7Lm2Pw9Rt4Vx8Kb3Nc6Hd1Jf5Gs0Ya"[i % 8 :] + "A1b2C3d4E5f6G7h8" for i in range(40)]
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(KEY_LINES) + "\n-----END RSA PRIVATE KEY-----"
JSON_PASSWORD = "FAKEjsonPw" + "Xq4Zr8Tn2Wm6Yk0Vb5Hc9Ls3"
YAML_PASSWORD = "FAKEyamlPw" + "Dg7Kp1Qs5Uw9Ae3Mi6Oy0Rt4"


def fragments(secret: str, size: int = 10) -> set[str]:
    runs = "".join(c if c.isalnum() else " " for c in secret).split()
    return {run[i : i + size] for run in runs if len(run) >= size for i in range(len(run) - size + 1)}


def leaks(secrets: list[str], text: str) -> list[str]:
    return [secret[:12] for secret in secrets if any(piece in text for piece in fragments(secret))]


def summary_log(home_path: Path) -> str:
    files = list(home_path.rglob("session-summaries/*.jsonl"))
    assert files, "the compaction wrote the summary log"
    return "\n".join(json.loads(line)["body"] for path in files for line in path.read_text().splitlines() if line)


def summary_in(request) -> str:
    return next(json.dumps(m) for m in request.messages if "STOWAGE CONTEXT SUMMARY" in json.dumps(m))


def test_a_private_key_across_the_transcript_cut_never_reaches_the_summary_model(
    fake_llm: FakeLLMServer, make_home
) -> None:
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY), times=None)
    # the key closes a long message: its BEGIN line lies in the middle the transcript cuts out
    scenario = Scenario().turn("WARM-0 please inspect the big output")
    scenario.turn("WARM-1 please inspect the big output; notes follow.\n" + "n " * 2500 + PRIVATE_KEY)
    for i in range(2, 5):
        scenario.turn(f"WARM-{i} please inspect the big output")
    result = run_scenario(home, scenario.turn("BIG now", id="big").turn("after BIG", id="after"), check=True)

    (summary_call,) = fake_llm.summary_requests()
    assert "WARM-1 please inspect" in summary_call.text, "the long message was summarized"
    assert "chars omitted here" in summary_call.text, "the long message was cut"
    assert not leaks(KEY_LINES, summary_call.text), "private key lines reached the summary model"
    follow_up = fake_llm.main_requests()[-2]
    assert "EGRESS-SUMMARY" in summary_in(follow_up)
    assert not leaks(KEY_LINES, summary_in(follow_up)) and not leaks(KEY_LINES, summary_log(home.path))
    assert result.step("big")["engine"]["status"]["last_compaction"]["result"] == "compacted"


def test_the_fallback_summary_keeps_no_password_from_call_arguments(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home)
    # the gist quotes each string argument, escaped, in 60 characters: the JSON password is cut after 22 of them
    calls = [
        ToolCall("harness_echo", {"text": f'{{"host": "db.internal", "password": "{JSON_PASSWORD}"}}'}, id="call_json"),
        ToolCall("harness_echo", {"text": f"db:\n  password: {YAML_PASSWORD}\n  user: app\n"}, id="call_yaml"),
    ]
    fake_llm.on(Match.user_turn("SETUP "), Reply.tool(*calls))
    fake_llm.on(Match.after_tool_result("call_yaml"), Reply.say("setup done"))
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.http_error(500, "upstream exploded"), times=None)
    scenario = Scenario().turn("WARM-0 please inspect the big output").turn("SETUP the database config")
    for i in range(1, 5):
        scenario.turn(f"WARM-{i} please inspect the big output")
    result = run_scenario(home, scenario.turn("BIG now", id="big").turn("after BIG", id="after"), check=True)

    setup = next(r for r in fake_llm.main_requests() if Match.after_tool_result("call_yaml")(r))
    assert JSON_PASSWORD in setup.text and YAML_PASSWORD in setup.text, "the call carried both passwords"
    last = result.step("big")["engine"]["status"]["last_compaction"]
    assert last["result"] == "fallback", last
    follow_up = fake_llm.main_requests()[-2]
    summary = summary_in(follow_up)
    assert "without the summary model" in summary and "harness_echo(" in summary, "the fallback lists the call"
    secrets = [JSON_PASSWORD, YAML_PASSWORD]
    assert not leaks(secrets, summary), "a password entered the history"
    assert not leaks(secrets, summary_log(home.path)), "a password entered the summary log"
    assert not leaks(secrets, "\n".join(r.text for r in fake_llm.summary_requests()))
