"""A summary model that fails with a key in its error: nothing Stowage writes or shows holds the key.

Provider errors echo what they were given: an httpx error names the URL with
its ``?key=AIza...``, a gateway quotes the ``Authorization: Bearer sk-proj-...``
header (here long enough that the host's 300-character cut of the message
falls inside the key).  Each failure goes through a real compaction (the
model called at once, and a summary prepared ahead), then every place the
error text reaches is read back: ``get_status()``, the attribute the host
warns the user from, the status file, the summary log, ``stowage summary``,
``stowage status`` (text and JSON), the dashboard's session JSON and
Stowage's log lines.  Before the fix the key was in all of them.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

import pytest

from stowage.command import main
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.records.status_file import status_path
from stowage.context_engine.records.summary_log import summaries_path
from stowage.host.aux_summary import classify

pytestmark = pytest.mark.reliability

GOOGLE_KEY = "AIza" + "SyQx7Lm2Vb9Tc4Rz8Wd1Hf6Jk3Np5Sg0Ya2"
OPENAI_KEY = "sk-proj-" + "Qx7Lm2Vb9Tc4Rz8Wd1Hf6Jk3Np5Sg0Ya2Ue7Io9Pl4Mn"
PIECES = [GOOGLE_KEY[:16], GOOGLE_KEY[16:], OPENAI_KEY[:20], OPENAI_KEY[20:]]


class HTTPStatusError(Exception):
    """Shaped like httpx's: the message names the request URL."""


class GatewayError(Exception):
    status_code = 502


def httpx_style(prompt: str, runtime: dict, timeout: float | None = None) -> str:
    raise HTTPStatusError(
        "Client error '400 Bad Request' for url 'https://generativelanguage.googleapis.com/v1beta/models/"
        f"gemini-2.0-flash:generateContent?key={GOOGLE_KEY}'\n"
        "For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/400"
    )


def gateway_echo(prompt: str, runtime: dict, timeout: float | None = None) -> str:
    raise classify(GatewayError(f"upstream rejected the request headers: {{'Authorization': 'Bearer {OPENAI_KEY}'}}"))


def long_gateway_echo(prompt: str, runtime: dict, timeout: float | None = None) -> str:
    """The host keeps 300 characters of a provider's message: here the cut falls 24 characters into the key."""
    before_key = "upstream rejected the request; headers: {'Authorization': 'Bearer "
    padding = "x" * (300 - 24 - len(before_key))
    raise classify(GatewayError(f"{padding}{before_key}{OPENAI_KEY}'}}"))


MODELS = {
    "httpx url with ?key=": httpx_style,
    "gateway echoing Bearer": gateway_echo,
    "long gateway echo, cut inside the key": long_gateway_echo,
}
SEEN = {  # a piece of each error that is shown: the test sees the error, masked
    "httpx url with ?key=": "400 Bad Request",
    "gateway echoing Bearer": "HTTP 502",
    "long gateway echo, cut inside the key": "HTTP 502",
}


def conversation() -> list[dict]:
    messages: list[dict] = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "go"}]
    for i in range(8):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"output {i}\n" * 300},
            {"role": "assistant", "content": f"step {i} done"},
            {"role": "user", "content": f"next {i}"},
        ]
    return messages


def engine_for(home: Path, model) -> StowageEngineCore:
    engine = StowageEngineCore(
        load_settings({"stowage": {"compaction": {"failure_cooldown_seconds": 0}}}), summary_model=model
    )
    engine.update_model("m", 32_000)
    engine.on_session_start("s", hermes_home=str(home))
    return engine


def cli(capsys, home: Path, *argv: str) -> str:
    code = main(["--hermes-home", str(home), *argv])
    out = capsys.readouterr()
    assert code == 0, out
    return out.out + out.err


def everything_shown(home: Path, engine: StowageEngineCore, capsys, caplog) -> dict[str, str]:
    root = engine.state.store.store.root
    spec = importlib.util.spec_from_file_location(
        "stowage_dashboard_api_masking", Path(__file__).resolve().parents[2] / "dashboard" / "plugin_api.py"
    )
    assert spec is not None and spec.loader is not None
    api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(api)
    return {
        "get_status()": json.dumps(engine.get_status()),
        "host warning attribute": str(engine._last_summary_error),
        "status file": status_path(root, "s").read_text(),
        "summary log": summaries_path(root, "s").read_text(),
        "stowage summary": cli(capsys, home, "summary", "--session", "s", "--all"),
        "stowage status": cli(capsys, home, "status"),
        "stowage --json status": cli(capsys, home, "--json", "status"),
        "dashboard session JSON": json.dumps(api.session("s")),
        "log lines": caplog.text,
    }


def leaks(shown: dict[str, str]) -> list[str]:
    return [where for where, text in shown.items() if any(piece in text for piece in PIECES)]


@pytest.mark.parametrize("failure", sorted(MODELS))
def test_a_summary_failure_with_a_key_is_masked_everywhere(home, capsys, caplog, failure, figures):
    caplog.set_level(logging.DEBUG)
    engine = engine_for(home, MODELS[failure])
    engine.compress(conversation(), current_tokens=30_000, force=True)
    engine.end_turn()
    shown = everything_shown(home, engine, capsys, caplog)
    figures.update(failure=failure, places=len(shown), leaking=leaks(shown))
    assert SEEN[failure] in shown["get_status()"] and SEEN[failure] in shown["summary log"]
    assert "[RED" in shown["get_status()"]  # masked, then cut (the gateway's message is cut inside the mask)
    assert not leaks(shown), leaks(shown)


@pytest.mark.parametrize("failure", sorted(MODELS))
def test_the_error_of_a_summary_prepared_ahead_is_masked(home, capsys, caplog, failure, figures):
    caplog.set_level(logging.DEBUG)
    engine = engine_for(home, MODELS[failure])
    messages = conversation()
    engine.last_prompt_tokens = int(engine.threshold_tokens * 0.95)
    engine.prepare_ahead(messages)
    engine.state.ahead.settle()
    assert "the summary prepared ahead failed" in caplog.text and SEEN[failure] in caplog.text
    engine.compress(messages, current_tokens=30_000, force=True)
    engine.end_turn()
    shown = everything_shown(home, engine, capsys, caplog)
    figures.update(failure=failure, places=len(shown), leaking=leaks(shown))
    assert not leaks(shown), leaks(shown)
