"""Silent fallbacks made loud, through the real host: ``stowage doctor`` and the session-start notice.

Each cause makes Hermes 0.19.0 run its built-in compressor with one line in
agent.log; the real ``hermes chat`` proves the fallback happened, then the
real ``stowage`` console script must fail naming the cause and the fix.
"""

from __future__ import annotations

import json
import re

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import chat_once, run_cli, run_stowage

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    "cause,kind,fix",
    [
        ("disabled", "plugin-disabled", "hermes plugins enable stowage"),
        ("case", "engine-name-case", "context: {engine: stowage}"),
        ("not-enabled", "plugin-not-enabled", "hermes plugins enable stowage"),
        ("not-selected", "not-selected", "hermes config set context.engine stowage"),
    ],
)
def test_each_fallback_cause_fails_doctor_with_its_fix(
    fake_llm: FakeLLMServer, make_home, cause: str, kind: str, fix: str
) -> None:
    if cause == "case":
        home = make_home(engine="Stowage", plugins=["stowage"])
    elif cause == "not-enabled":
        home = make_home(engine="stowage", plugins=[])
    elif cause == "not-selected":  # installed and enabled, but context.engine names the built-in
        home = make_home(engine="compressor", plugins=["stowage"])
    else:
        home = make_home(engine="stowage", plugins=["stowage"])
        run_cli(home, "plugins", "disable", "stowage").check()
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))

    chat = chat_once(home, "HELLO", "-Q")
    assert chat.returncode == 0, chat.output
    assert chat.probe["engine"]["class"] == "ContextCompressor", chat.probe  # the host fell back, silently
    if cause == "case":  # the host's one line, which doctor also reads
        assert "Context engine 'Stowage' not found" in (home.path / "logs" / "agent.log").read_text()

    doctor = run_stowage(home, "doctor", "--no-verify")
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert kind in doctor.stdout and fix in doctor.stdout, doctor.stdout
    assert "Traceback" not in doctor.stdout + doctor.stderr
    if cause == "case":  # the plugin loaded: the engine row names the case, not a failed load
        assert "would not load" not in doctor.stdout and "Hermes matches 'stowage' exactly" in doctor.stdout
    if cause in ("case", "not-selected"):  # the plugin loads, so `hermes stowage` answers too
        via_hermes = run_cli(home, "stowage", "doctor", "--no-verify")
        assert via_hermes.returncode == 1 and kind in via_hermes.stdout, via_hermes.output
    status = run_stowage(home, "status")
    assert status.returncode == 0 and "run `stowage doctor`" in status.stdout


def test_a_right_install_passes_doctor_after_a_session(fake_llm: FakeLLMServer, make_home) -> None:
    home = make_home(engine="stowage", plugins=["stowage"], whole_outputs=True)  # `stowage setup` done
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))
    chat = chat_once(home, "HELLO", "-Q")
    assert chat.probe["engine"]["class"] == "StowageContextEngine", chat.probe
    assert "not selected" not in chat.output

    doctor = run_stowage(home, "doctor", "--no-verify")
    assert doctor.returncode == 0, doctor.stdout
    assert "stowage (via the entry point)" in doctor.stdout


@pytest.mark.parametrize(
    "engine,words",
    [("compressor", "not selected (context.engine is 'compressor')"), ("Stowage", "matches engine names exactly")],
)
def test_loaded_but_not_selected_is_said_in_the_terminal(
    fake_llm: FakeLLMServer, make_home, engine: str, words: str
) -> None:
    home = make_home(engine=engine, plugins=["stowage"])
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))

    chat = chat_once(home, "HELLO", "-Q")

    assert chat.returncode == 0 and "hi there" in chat.stdout, chat.output
    assert chat.output.count("the Stowage plugin is loaded but") == 1, chat.output
    assert words in chat.stderr


def test_hermes_stowage_help_lists_the_commands(make_home) -> None:
    home = make_home(engine="stowage", plugins=["stowage"])
    for argv in (("stowage", "--help"), ("stowage", "help")):
        shown = run_cli(home, *argv)
        assert shown.returncode == 0, shown.output
        for command in ("status", "doctor", "summary", "blobs", "purge", "replay"):
            assert re.search(rf"^ +{command} ", shown.stdout, re.M), (argv, shown.stdout)
    options = run_cli(home, "stowage", "help", "doctor")
    assert options.returncode == 0 and "--no-verify" in options.stdout, options.output


def test_a_trigger_below_what_every_request_carries_is_a_warning(fake_llm: FakeLLMServer, make_home) -> None:
    """view.compact_at 0.1 of 64k: Hermes's system prompt and tool schemas alone are over the 6,400-token trigger."""
    home = make_home(
        engine="stowage", plugins=["stowage"], config={"stowage": {"view": {"compact_at": 0.1}}}, context_length=64_000
    )
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))
    chat = chat_once(home, "HELLO", "-Q")
    assert chat.probe["engine"]["class"] == "StowageContextEngine", chat.probe
    request = next(r for r in fake_llm.requests() if r.tools)  # the session's request (not a title call)
    assert request.messages[0]["role"] == "system"  # with the tools: what the fixed part is made of

    doctor = run_stowage(home, "doctor", "--no-verify")
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "trigger-below-fixed-part" in doctor.stdout, doctor.stdout
    detail = json.loads(run_stowage(home, "--json", "doctor", "--no-verify").stdout)
    (issue,) = [i for i in detail["issues"] if i["kind"] == "trigger-below-fixed-part"]
    assert "compaction trigger (6,400 tokens)" in issue["detail"], issue
    assert "Fix: set view.compact_at to at least" in issue["detail"], issue
    status = run_stowage(home, "status")
    assert "every request carries" in status.stdout and "WARNING" in status.stdout, status.stdout
    assert "stowage: the compaction trigger (6,400 tokens)" in (home.path / "logs" / "agent.log").read_text()


def test_the_documented_uninstall_leaves_hermes_on_its_compressor_without_a_fallback(
    fake_llm: FakeLLMServer, make_home
) -> None:
    """`stowage uninstall --yes`, then the code removed (hidden here): Hermes starts on its compressor, silently."""
    from stowage_dev.hermes_home import STOWAGE_DIST

    removed = {"STOWAGE_HARNESS_HIDE_DISTS": STOWAGE_DIST}  # as after `pip uninstall hermes-stowage`
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))
    homes = {}
    for name in ("kept", "uninstalled"):
        homes[name] = make_home(engine="stowage", plugins=["stowage"])
        assert chat_once(homes[name], "HELLO", "-Q").probe["engine"]["class"] == "StowageContextEngine"
    done = run_stowage(homes["uninstalled"], "uninstall", "--yes")
    assert done.returncode == 0 and "pip uninstall hermes-stowage" in done.stdout, done.stdout + done.stderr
    for name, home in homes.items():
        chat = chat_once(home, "HELLO", "-Q", env=removed)
        assert chat.returncode == 0 and chat.probe["engine"]["class"] == "ContextCompressor", chat.output
        log = (home.path / "logs" / "agent.log").read_text(encoding="utf-8")
        fell_back = "Context engine 'stowage' not found" in log
        # removing the code alone leaves a config naming a missing engine: a fallback at every start
        assert fell_back == (name == "kept"), (name, log[-2000:])


PROMPT = "Allow this plugin to replace built-in tools"


def test_the_capability_prompt_of_plugins_enable_answered_as_documented(fake_llm: FakeLLMServer, make_home) -> None:
    """0.19.0 asks at `hermes plugins enable`; Stowage overrides no built-in tool, so No (Enter) is the answer.

    The other documented way, `--no-allow-tool-override`, gives the same answer without the question.
    """
    fake_llm.on(Match.user_turn("HELLO"), Reply.say("hi there"))
    answers = {"enter": ((), "\n"), "flag": (("--no-allow-tool-override",), None)}
    for name, (flags, typed) in answers.items():
        home = make_home(engine="stowage", plugins=[], whole_outputs=True)  # `stowage setup` done
        enabled = run_cli(home, "plugins", "enable", "stowage", *flags, input=typed)
        assert enabled.returncode == 0, enabled.output
        assert (PROMPT in enabled.output) == (name == "enter"), (name, enabled.output)
        entry = home.read_config()["plugins"]["entries"]["stowage"]
        assert entry == {"allow_tool_override": False}, entry  # what the answer wrote
        chat = chat_once(home, "HELLO", "-Q")
        assert chat.probe["engine"]["class"] == "StowageContextEngine", (name, chat.output)
        assert "override" not in chat.output.lower(), chat.output  # nothing asked for the grant
        doctor = run_stowage(home, "doctor", "--no-verify")
        assert doctor.returncode == 0, doctor.stdout
