"""Plant lines in a conversation and run one real compaction: the prompts the summary model received.

Used by test_secret_coverage.py.  Each line goes, tagged ``PLANT-<i>:``, into
one route by which text reaches the summary prompt: a user message, a tool
output (whole, or its error line) or the JSON arguments of a tool call.
"""

from __future__ import annotations

import json

from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore

SUMMARY = "## Goal\nG\n\n## Next Steps\n- go"
ROUTES = ("user", "tool_output", "tool_error_line", "arguments")


def planted(lines: list[str], route: str) -> list[dict]:
    """A conversation whose summarized window holds each line in ``route``."""
    messages: list[dict] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Please set up the services."},
    ]
    for i, line in enumerate(lines):
        tagged = f"PLANT-{i}: {line}"
        if route == "user":
            messages += [{"role": "user", "content": tagged}, {"role": "assistant", "content": f"Noted {i}."}]
            continue
        args = {"command": tagged if route == "arguments" else f"step {i}"}
        output = {
            "tool_output": tagged,
            "tool_error_line": f"running\nError: PLANT-{i} failed with {line}",
            "arguments": "ok",
        }[route]
        call = {"id": f"c{i}", "type": "function", "function": {"name": "terminal", "arguments": json.dumps(args)}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "name": "terminal", "content": output},
        ]
    if messages[-1]["role"] != "assistant":
        messages.append({"role": "assistant", "content": "Done."})
    return messages + [
        {"role": "user", "content": "Now summarize where we are."},
        {"role": "assistant", "content": "We are done with the setup."},
        {"role": "user", "content": "Thanks, continue."},
    ]


def summary_prompts(lines: list[str], route: str) -> str:
    """The text every summary call of one forced compaction of the planted conversation sent."""
    prompts: list[str] = []

    def model(prompt: str, runtime: dict, timeout: float | None = None) -> str:
        prompts.append(prompt)
        return SUMMARY

    engine = StowageEngineCore(
        load_settings({"stowage": {"compaction": {"protect_first_n": 1, "protect_last_n": 1}}}), summary_model=model
    )
    engine.update_model("m", 200_000)
    engine.compress(planted(lines, route), current_tokens=1000, force=True)
    assert prompts, "the compaction called the summary model"
    return "\n".join(prompts)
