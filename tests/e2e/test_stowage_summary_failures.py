"""The summary model fails: nothing is lost silently, the session goes on.

HTTP 500, a timeout, an empty reply and garbage give the deterministic
fallback summary (built from the history itself, quoting the newest request)
plus the host's visible warning; a 401 aborts the compaction and keeps the
messages unchanged.  After a failure the summary model cools down.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import assert_valid_request, script_big_turn, script_warm_up, stowage_home, warm_up

pytestmark = pytest.mark.e2e


def _run_failing_compaction(fake_llm: FakeLLMServer, make_home, reply: Reply):
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), reply, times=None)
    scenario = warm_up(Scenario(), 5).turn("BIG now", id="big").turn("after BIG", id="after")
    return run_scenario(home, scenario, check=True)


@pytest.mark.parametrize(
    "reply,kind",
    [
        (Reply.http_error(500, "upstream exploded"), "http"),
        (Reply.timeout(8), "timeout"),
        (Reply.empty(), "empty"),
        (Reply.say("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"), "garbage"),
    ],
    ids=["http500", "timeout", "empty", "garbage"],
)
def test_summary_failure_falls_back_without_losing_context(
    fake_llm: FakeLLMServer, make_home, reply: Reply, kind: str
) -> None:
    result = _run_failing_compaction(fake_llm, make_home, reply)

    assert fake_llm.summary_requests(), "the summary model was asked"
    big = result.step("big")["engine"]
    assert big["compression_count"] == 1
    last = big["status"]["last_compaction"]
    assert last["result"] == "fallback" and last["summary_error"].startswith(kind), last
    assert big["status"]["governor"]["summary_failures"] == 1
    assert big["status"]["governor"]["summary_cooldown_seconds"] > 0

    follow_up = fake_llm.main_requests()[-2]  # the request after the BIG tool call
    summary = next(m for m in follow_up.messages if "STOWAGE CONTEXT SUMMARY" in json.dumps(m))
    text = json.dumps(summary)
    assert "without the summary model" in text and "BIG now" in text
    assert "harness_big_output" in text  # the actions of the summarized turns are listed
    assert_valid_request(follow_up)
    assert any("Compression summary failed" in w for w in result.warnings()), result.warnings()
    assert result.step("after")["final_response"] == "OK (default reply)"


def test_summary_auth_failure_aborts_and_keeps_every_message(fake_llm: FakeLLMServer, make_home) -> None:
    result = _run_failing_compaction(fake_llm, make_home, Reply.http_error(401, "invalid api key"))

    big = result.step("big")
    assert big["engine"]["compression_count"] == 0
    assert big["engine"]["status"]["last_compaction"]["result"] == "aborted"
    assert any("Compression aborted" in w and "No messages were dropped" in w for w in result.warnings())
    texts = json.dumps(big["messages"])
    for i in range(5):
        assert f"END-WARM{i}" in texts  # every big output is still there, unpruned
    assert "STOWAGE CONTEXT SUMMARY" not in texts
    assert_valid_request(fake_llm.last_main_request())


GOOGLE_KEY = "AIza" + "SyQx7Lm2Vb9Tc4Rz8Wd1Hf6Jk3Np5Sg0Ya2"
OPENAI_KEY = "sk-proj-" + "Qx7Lm2Vb9Tc4Rz8Wd1Hf6Jk3Np5Sg0Ya2Ue7Io9Pl4Mn"
KEY_PIECES = [GOOGLE_KEY[:16], GOOGLE_KEY[16:], OPENAI_KEY[:20], OPENAI_KEY[20:]]


def test_a_provider_error_quoting_keys_is_masked_in_everything_written_or_shown(
    fake_llm: FakeLLMServer, make_home, monkeypatch
) -> None:
    """The summary model's error echoes a ``?key=`` URL and a Bearer header: the host's warning, get_status(),
    the status file, the summary log, ``stowage summary``/``status`` and the dashboard's JSON show it masked."""
    home = stowage_home(make_home)
    script_warm_up(fake_llm, 5)
    script_big_turn(fake_llm)
    echo = (
        f"gateway could not reach https://generativelanguage.googleapis.com/v1beta/models/m?key={GOOGLE_KEY} "
        f"(sent Authorization: Bearer {OPENAI_KEY})"
    )
    fake_llm.on(Match.summary_request(), Reply.http_error(500, echo), times=None)
    result = run_scenario(home, warm_up(Scenario(), 5).turn("BIG now", id="big").turn("after BIG", id="after"))

    big = result.step("big")["engine"]
    error = big["status"]["last_compaction"]["summary_error"]
    assert error.startswith("http") and "[REDACTED]" in error, error
    stowage = Path(sys.executable).with_name("stowage")
    shown = {
        "host warnings": "\n".join(result.warnings()),
        "get_status()": json.dumps(big["status"]),
        "host log records": "\n".join(result.logs("DEBUG", noise=True)),
    }
    for folder in ("session-status", "session-summaries"):
        for path in (home.path / "stowage" / folder).glob("*"):
            shown[f"{folder}/{path.name}"] = path.read_text()
    assert len(shown) >= 5, sorted(shown)  # a status file and a summary log were written
    for args in (["summary", "--all"], ["status"], ["--json", "status"]):
        ran = subprocess.run(
            [str(stowage), *args], env=home.env(), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
        assert ran.returncode == 0, ran.stderr
        shown["stowage " + " ".join(args)] = ran.stdout + ran.stderr
    assert "[REDACTED]" in shown["stowage summary --all"]
    monkeypatch.setenv("HERMES_HOME", str(home.path))
    spec = importlib.util.spec_from_file_location(
        "stowage_dashboard_api_e2e", Path(__file__).resolve().parents[2] / "dashboard" / "plugin_api.py"
    )
    assert spec is not None and spec.loader is not None
    api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(api)
    sessions = api.sessions()["sessions"]
    assert sessions
    for listed in sessions:
        shown[f"dashboard session {listed['session_id']}"] = json.dumps(api.session(listed["session_id"]))
    assert any("summary_error" in text for name, text in shown.items() if name.startswith("dashboard"))
    leaking = [where for where, text in shown.items() if any(piece in text for piece in KEY_PIECES)]
    assert not leaking, leaking
    assert any("Compression summary failed" in w and "[REDACTED]" in w for w in result.warnings()), result.warnings()
