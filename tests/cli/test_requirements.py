"""What a missing requirement costs, as doctor and the register-time notice say it, held against a real import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stowage.command.requirements import requirement_problems
from stowage.host.load_failure import COST_WITHOUT, REQUIREMENTS, pip_command
from stowage.host.notice import degraded_notice

# imports the plugin as register(ctx) does with *module* blocked, and counts one output's tokens
_WITHOUT = """
import json, sys
sys.modules[sys.argv[1]] = None
try:
    import stowage.host.registration, stowage.host.commands
    from stowage.context_engine.chat.tokens import TokenCounter
    from stowage.tool_search.stemmer import ENGINE
    counter = TokenCounter("o200k_base")
    print(json.dumps({"loads": True, "backend": counter.backend, "stemmer": ENGINE,
                      "tokens": counter.count_text(sys.argv[2])}))
except ImportError as exc:
    print(json.dumps({"loads": False, "cause": str(exc)}))
"""
DENSE = "上下文引擎把大型工具输出存储起来，模型只看到预览和句柄。" * 50


def without(module: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _WITHOUT, module, DENSE], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_requirement_has_a_stated_cost():
    assert set(COST_WITHOUT) == set(REQUIREMENTS)


@pytest.mark.parametrize("module", sorted(REQUIREMENTS))
def test_the_stated_cost_is_what_happens_without_it(module: str) -> None:
    outcome = without(module)
    cost = COST_WITHOUT[module]
    assert outcome["loads"] == (cost is not None), outcome
    if module == "tiktoken":  # counts go to characters/4: on Chinese about 3x under the tokenizer's count
        exact = without("stowage_no_such_requirement")["tokens"]
        assert outcome["backend"] == "estimate" and outcome["tokens"] == len(DENSE) // 4
        assert exact > 2.5 * outcome["tokens"] and "3x on Chinese" in cost
    if module == "snowballstemmer":
        assert outcome["stemmer"] == "suffix-rules" and "suffix rules" in cost


def test_doctor_names_what_a_missing_tokenizer_costs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    (problem,) = requirement_problems("/opt/hermes/bin/python")
    assert problem["severity"] == "error" and not problem.get("advisory")
    assert "does not load" not in problem["detail"] and "token counts fall back to characters/4" in problem["detail"]
    assert "Fix: /opt/hermes/bin/python -m pip install 'tiktoken>=0.7'" in problem["detail"]


def test_the_register_time_notice_names_the_degradation():
    assert degraded_notice([], "py") is None
    assert degraded_notice(["bpe_openai"], "py") is None
    line = degraded_notice(["tiktoken"], "/opt/h/python")
    assert line is not None and line.startswith("stowage: Stowage runs degraded: without tiktoken>=0.7, token counts")
    assert line.endswith(f"Fix: {pip_command('/opt/h/python')}")
