"""After the README's install block, tool outputs reach Stowage whole, on the Hermes of this venv (every host).

The README block runs as written (after its venv and pip lines, which the
host venv stands for) in a Hermes home that had no Stowage: ``pypi-hermes``
on 0.19, ``newer-hermes`` (a user-plugin folder) on 0.22.  On the other hosts
the ``newer-hermes`` block runs with ``hermes plugins enable stowage`` for its
``plugins.enabled`` line, as the README says for 0.20.1 (and ``hermesx`` for
``hermes`` there): before 0.19 ``hermes plugins enable`` finds no pip-installed
plugin, so the user-plugin folder is the route those hosts take.  Then one
``hermes chat`` session in which the scripted model runs the real ``terminal`` tool on a
command printing 208,000 characters and the real ``read_file`` on a file with
a 160,000-character line.  Each output must be in Stowage's store whole:
fetched back with ``stowage blobs cat`` and compared character for
character.  Hermes's own caps (``tool_output.max_bytes`` 50,000,
``tool_output.max_line_length`` 2,000, ``file_read_max_chars`` 100,000) cut
both before Stowage's hook unless the block lifts them.  After the block the
dashboard finds the STOWAGE tab, with the plugin enabled.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stowage.host.host_support import installed_version, parse
from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.hermes_home import REPO_ROOT, STOWAGE_DIST, HermesHome
from stowage_dev.readme_blocks import install_block
from stowage_dev.runner import HERMES, run_cli

from .install_routes import CLI_TIMEOUT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RELEASE = parse(installed_version()) or (0, 0, 0)
CLI = Path(HERMES).name  # hermes, or hermesx (0.20.1)
HANDLE = re.compile(r"handle: ([0-9a-f]{16,64})")
LINES = 2000
TERMINAL_OUTPUT = "\n".join(f"line {i:05d} {i:092d}" for i in range(1, LINES + 1))  # 208,000 chars
COMMAND = f"for i in $(seq 1 {LINES}); do printf 'line %05d %092d\\n' $i $i; done"
WIDE_LINE = "".join(f"{i:07d}," for i in range(20_000))  # 160,000 chars on one line
DASHBOARD_TABS = """
import json
try:
    from hermes_cli.web_server_dashboard import _discover_dashboard_plugins
except ImportError:
    from hermes_cli.web_server import _discover_dashboard_plugins
print(json.dumps([p["name"] for p in _discover_dashboard_plugins()]))
"""


def _block_lines() -> list[str]:
    """The README block for this host after its venv and pip lines, adapted only as the docstring says."""
    if RELEASE[:2] == (0, 19):
        return install_block("pypi-hermes")[2:]
    out = []
    for line in install_block("newer-hermes")[2:]:
        if RELEASE < (0, 22) and line.startswith("hermes config set plugins.enabled"):
            line = "hermes plugins enable stowage"
        if line.startswith("hermes ") and CLI != "hermes":
            line = CLI + line[len("hermes") :]
        out.append(line)
    return out


def _run_block(home: HermesHome) -> subprocess.CompletedProcess[str]:
    if RELEASE[:2] != (0, 19):  # the user-plugin folder route: Hermes loads the folder, not this venv's install
        home.hide_distribution(STOWAGE_DIST)
    bin_dir = Path(sys.executable).parent
    env = home.env({"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"})
    done = None
    for line in _block_lines():
        done = subprocess.run(
            ["bash", "-c", line.replace("~/.hermes", str(home.path))],
            env=env,
            cwd=REPO_ROOT,  # the README: run from a checkout of this repository
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (line, done.stdout + done.stderr)
        assert "Traceback" not in done.stdout + done.stderr, (line, done.stdout + done.stderr)
    assert done is not None
    return done


def _stored(home: HermesHome, preview: str) -> str:
    """The blob a spill preview names, as ``stowage blobs cat`` prints it."""
    handles = HANDLE.findall(preview)
    assert handles, preview[:500]
    cat = subprocess.run(
        [sys.executable, "-m", "stowage.command", "--hermes-home", str(home.path), "blobs", "cat", handles[0]],
        env={**os.environ, "HERMES_HOME": str(home.path)},
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
    )
    assert cat.returncode == 0, cat.stderr
    return cat.stdout


def test_the_readme_block_keeps_tool_outputs_whole(fake_llm: FakeLLMServer, make_home) -> None:
    home = make_home(engine="compressor", plugins=[])  # a user's Hermes before Stowage, its caps as shipped
    wide = home.work_dir / "wide.csv"
    wide.write_text(f"head\n{WIDE_LINE}\ntail", encoding="utf-8")

    doctor = _run_block(home)

    assert "result: no problems" in doctor.stdout, doctor.stdout
    fake_llm.on(Match.user_turn("WHOLE"), Reply.tool(ToolCall("terminal", {"command": COMMAND}, id="call_term")))
    fake_llm.on(
        Match.after_tool_result("call_term"), Reply.tool(ToolCall("read_file", {"path": str(wide)}, id="call_read"))
    )
    fake_llm.on(Match.after_tool_result("call_read"), Reply.say("WHOLE-SEEN"))
    chat = run_cli(home, "chat", "-q", "WHOLE outputs please", "-Q", timeout=CLI_TIMEOUT)
    assert chat.returncode == 0 and "WHOLE-SEEN" in chat.stdout, chat.output

    results = fake_llm.matching(Match.after_tool_result("call_read"))[0].tool_results
    terminal = json.loads(_stored(home, results["call_term"]))
    assert "OUTPUT TRUNCATED" not in terminal["output"]
    assert len(terminal["output"]) == len(TERMINAL_OUTPUT) and terminal["output"] == TERMINAL_OUTPUT
    read = json.loads(_stored(home, results["call_read"]))
    numbered = [line.split("|", 1) for line in read["content"].splitlines()]
    assert [text for _, text in numbered] == ["head", WIDE_LINE, "tail"], read["content"][:300]

    tabs = subprocess.run(
        [sys.executable, "-c", DASHBOARD_TABS],
        env=home.env(),
        cwd=home.work_dir,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
    )
    if tabs.returncode != 0 and "requires fastapi" in tabs.stderr:
        # this host venv has no dashboard (hermes-agent without its web extra): where its scan looks, then
        found = [json.loads(m.read_text())["name"] for m in home.plugins_dir.glob("*/dashboard/manifest.json")]
    else:
        assert tabs.returncode == 0, tabs.stderr
        found = json.loads(tabs.stdout.strip().splitlines()[-1])
    assert "stowage" in found, (tabs.stdout, tabs.stderr)
    assert "stowage" in home.read_config()["plugins"]["enabled"]


def test_doctor_fails_on_each_cap_that_cuts_until_setup_lifts_it(make_home) -> None:
    """A home that selects Stowage without the settings: doctor exits 1 naming each `config set` line."""
    home = make_home(engine="stowage", plugins=["stowage"])  # Hermes's caps as it ships them

    doctor = run_cli(home, "stowage", "doctor", "--no-verify", timeout=CLI_TIMEOUT)

    assert doctor.returncode == 1, doctor.output
    assert f"{CLI} config set tool_output.max_bytes 10000000" in doctor.stdout, doctor.stdout
    assert f"{CLI} config set tool_output.max_line_length 10000000" in doctor.stdout, doctor.stdout
    assert ("web.extract_char_limit 500000" in doctor.stdout) is (RELEASE >= (0, 18)), doctor.stdout
    assert "no setting lifts" in doctor.stdout and "execute_code" in doctor.stdout  # the note, every host

    setup = run_cli(home, "stowage", "setup", timeout=CLI_TIMEOUT)

    assert setup.returncode == 0, setup.output
    assert f"+ {CLI} config set tool_output.max_bytes 10000000" in setup.stdout, setup.stdout
    again = run_cli(home, "stowage", "doctor", "--no-verify", timeout=CLI_TIMEOUT)
    assert again.returncode == 0 and "result: no problems" in again.stdout, again.output
    config = home.read_config()
    assert config["tool_output"]["max_bytes"] == 10_000_000 and config["file_read_max_chars"] == 10_000_000
