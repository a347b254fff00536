"""The driver tells a plugin context engine from the built-in one and shows
the host's fallback when the configured engine does not exist."""

from __future__ import annotations

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import Scenario, run_scenario

pytestmark = pytest.mark.e2e

ENGINE_ENV = {"HARNESS_PROBE_ENGINE": "1"}


def test_plugin_engine_is_identified_and_driven(fake_llm: FakeLLMServer, make_home) -> None:
    home = make_home(engine="harness_dummy")
    home.install_harness_probe()
    fake_llm.on(Match.main(), Reply.say("fine", usage={"prompt_tokens": 4321}), times=None)
    scenario = Scenario().turn("one").turn("two").compress(focus="the focus", id="manual").end_session(id="end")

    result = run_scenario(home, scenario, env=ENGINE_ENV, check=True)

    engine = result.engine
    assert not engine["is_builtin"]
    assert (engine["class"], engine["name"]) == ("HarnessDummyEngine", "harness_dummy")
    assert engine["module"] == "hermes_plugins.harness_probe"
    registered = result.report["plugin_state"]["context_engine"]
    assert registered["class"] == "HarnessDummyEngine" and registered["id"] != engine["id"]  # a deepcopy
    assert result.step("manual")["engine"]["attrs"]["last_prompt_tokens"] == 4321
    events = [e for e in home.probe_events() if e["hook"].startswith("engine.")]
    names = [e["hook"] for e in events]
    assert names[0] == "engine.on_session_start" and names[-1] == "engine.on_session_end"
    (compress,) = [e for e in events if e["hook"] == "engine.compress"]
    assert compress["focus_topic"] == "the focus" and compress["force"] is True
    assert result.step("manual")["messages_after"] == result.step("manual")["messages_before"]


def test_unknown_engine_falls_back_to_builtin_with_a_warning(make_home) -> None:
    home = make_home(engine="does_not_exist")

    result = run_scenario(home, Scenario().turn("hi"), check=True)

    assert result.engine["is_builtin"]
    assert any("does_not_exist" in line and "falling back" in line for line in result.logs())
