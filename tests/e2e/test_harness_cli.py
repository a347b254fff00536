"""The real ``hermes`` CLI runs offline in a harness home."""

from __future__ import annotations

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.hermes_home import HermesHome
from stowage_dev.runner import chat_once, enable_plugin, plugins_list, run_cli

pytestmark = pytest.mark.e2e


def test_plugins_list_shows_entry_point_plugin(hermes_home: HermesHome) -> None:
    plain = run_cli(hermes_home, "plugins", "list", "--plain", "--no-bundled").check()
    assert "stowage" in plain.stdout

    listed = {p["name"]: p for p in plugins_list(hermes_home, "--no-bundled")}
    assert listed["stowage"]["source"] == "entrypoint"
    assert listed["stowage"]["status"] == "not enabled"
    assert hermes_home.network_attempts() == []


def test_plugins_enable_writes_config(hermes_home: HermesHome) -> None:
    hermes_home.install_harness_probe(enable=False)

    enable_plugin(hermes_home, "stowage")
    enable_plugin(hermes_home, "harness_probe")

    assert set(hermes_home.read_config()["plugins"]["enabled"]) >= {"stowage", "harness_probe"}
    listed = {p["name"]: p for p in plugins_list(hermes_home, "--no-bundled")}
    assert listed["stowage"]["status"] == "enabled"
    assert listed["harness_probe"] == {**listed["harness_probe"], "status": "enabled", "source": "user"}


def test_chat_single_query(fake_llm: FakeLLMServer, hermes_home: HermesHome) -> None:
    fake_llm.on(Match.user_turn("PING"), Reply.say("PONG-CLI-77"))

    result = chat_once(hermes_home, "PING from the CLI", "-Q")

    result.check()
    assert "PONG-CLI-77" in result.stdout
    assert "session_id:" in result.stderr
    (request,) = fake_llm.main_requests()
    assert request.last_user_text == "PING from the CLI"
    assert fake_llm.aux_requests() == []  # title generation is off in harness homes
    assert hermes_home.network_attempts() == []
    assert result.probe["engine"]["is_builtin"] and result.probe["engine"]["name"] == "compressor"
    assert result.stderr.strip().endswith(result.probe["session_id"])


def test_chat_loads_plugin_engine_and_tools(fake_llm: FakeLLMServer, make_home) -> None:
    home = make_home(engine="harness_dummy")
    home.install_harness_probe()
    fake_llm.on(Match.user_turn("ECHO"), Reply.tool(ToolCall("harness_echo", {"text": "CLI-ECHO"})))

    result = chat_once(home, "ECHO please", "-Q", env={"HARNESS_PROBE_ENGINE": "1"}).check()

    assert result.probe["engine"]["class"] == "HarnessDummyEngine"
    (probe_plugin,) = [p for p in result.probe["plugins"] if p["key"] == "harness_probe"]
    assert probe_plugin["source"] == "user" and probe_plugin["enabled"] and probe_plugin["tools"] == 2
    assert fake_llm.last_main_request().tool_results == {"call_0001": '{"echo": "CLI-ECHO"}'}
    hooks = [e["hook"] for e in home.probe_events()]
    assert hooks[0] == "engine.on_session_start" and hooks[-1] == "engine.on_session_end"
