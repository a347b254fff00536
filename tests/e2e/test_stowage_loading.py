"""Stowage is the engine Hermes actually runs, by every install route.

The host falls back to its built-in compressor with only a warning when the
plugin is not found, so each test checks the engine's class and module
inside the real agent, and one test proves the check catches a fallback.
"""

from __future__ import annotations

import json

import pytest

from stowage.context_engine.config.schema import KEYS_BY_PATH
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import Scenario, chat_once, enable_plugin, plugins_list, run_scenario

from .stowage_session import stowage_home

pytestmark = pytest.mark.e2e


def _assert_stowage(result, source: str) -> None:
    engine = result.engine
    assert engine["class"] == "StowageContextEngine" and not engine["is_builtin"], engine
    assert engine["name"] == "stowage"
    assert engine["module"].endswith("stowage.host.hermes_engine"), engine["module"]
    plugin = result.plugin("stowage")
    assert plugin["source"] == source and plugin["enabled"] is True and not plugin.get("error"), plugin


@pytest.mark.parametrize("route,source", [("entrypoint", "entrypoint"), ("symlink", "user"), ("copy", "user")])
def test_install_route_loads_stowage_engine(fake_llm: FakeLLMServer, make_home, route: str, source: str) -> None:
    home = stowage_home(make_home, route=route)
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))

    result = run_scenario(
        home, Scenario().turn("HELLO", id="t").probe("threshold_tokens", "context_length", id="p"), check=True
    )

    _assert_stowage(result, source)
    assert result.step("t")["final_response"] == "hi there"
    attrs = result.step("p")["engine"]["attrs"]
    # the lean view is on by default: the working budget is view.compact_at of the window
    assert attrs["context_length"] == 128_000
    assert attrs["threshold_tokens"] == int(128_000 * KEYS_BY_PATH["view.compact_at"].default)
    assert not any("falling back to built-in" in line for line in result.logs())


def test_without_plugins_enabled_the_fallback_is_detected(fake_llm: FakeLLMServer, make_home) -> None:
    """The silent-fallback trap: context.engine set, plugins.enabled missing."""
    home = make_home(engine="stowage", plugins=[])

    result = run_scenario(home, Scenario().turn("HELLO"), check=True)

    assert result.engine["is_builtin"] and result.engine["class"] == "ContextCompressor"
    assert any("Context engine 'stowage' not found" in line for line in result.logs())


def test_bad_config_stops_the_agent_with_a_clear_error(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home, config={"stowage": {"compaction": {"threshold": 1.5, "treshold": 0.5}}})

    result = run_scenario(home, Scenario().turn("HELLO"))

    assert not result.ok
    error = result.report["error"]["message"]
    assert "stowage.compaction.threshold = 1.5" in error and "from 0.1 to 0.95" in error
    assert "did you mean 'threshold'" in error
    assert fake_llm.main_requests() == []  # nothing ran with a silently wrong config


def test_hermes_cli_lists_enables_and_chats_with_stowage(fake_llm: FakeLLMServer, make_home) -> None:
    home = make_home(engine="stowage", plugins=[])

    listed = {p["name"]: p for p in plugins_list(home)}
    assert "stowage" in listed and listed["stowage"]["status"] == "not enabled", listed.get("stowage")
    assert listed["stowage"]["source"] == "entrypoint"

    enable_plugin(home, "stowage")
    assert "stowage" in (home.read_config().get("plugins") or {}).get("enabled", [])
    assert {p["name"]: p for p in plugins_list(home)}["stowage"]["status"] == "enabled"

    fake_llm.on(Match.user_turn("CLI-HELLO"), Reply.say("cli says hi"))
    chat = chat_once(home, "CLI-HELLO", "-Q")
    assert chat.returncode == 0, chat.output
    assert "cli says hi" in chat.stdout
    assert chat.probe["engine"]["class"] == "StowageContextEngine", chat.probe


MENU_SCRIPT = """
import json, sys
import hermes_cli.curses_ui as ui
from hermes_cli.plugins_cmd import _configure_context_engine
seen = {}
def pick(title, items, selected=0, **kwargs):
    seen["title"], seen["items"] = title, items
    return next(i for i, label in enumerate(items) if label.startswith("stowage"))
ui.curses_radiolist = pick
changed = _configure_context_engine()
print(json.dumps({"changed": changed, **seen}))
"""


def test_hermes_plugins_menu_offers_stowage_as_context_engine(fake_llm: FakeLLMServer, make_home) -> None:
    """The `hermes plugins` curses menu, with the radio list answered by the test."""
    import subprocess
    import sys

    home = make_home(engine="compressor", plugins=["stowage"])
    proc = subprocess.run(
        [sys.executable, "-c", MENU_SCRIPT],
        env=home.env(),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=home.work_dir,
    )
    assert proc.returncode == 0, proc.stderr
    menu = json.loads(proc.stdout.strip().splitlines()[-1])
    assert menu["title"].startswith("Context Engine") and menu["items"][0] == "compressor (default)"
    assert any(label.startswith("stowage") for label in menu["items"]), menu["items"]
    assert menu["changed"] and home.read_config()["context"]["engine"] == "stowage"
