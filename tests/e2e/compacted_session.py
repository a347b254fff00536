"""One real Stowage session that compacts once, run once and read by several test modules.

Five warm-up turns with real ~4k-token tool outputs (the first one carries a
planted secret), then a turn whose tool-call response reports 100k prompt
tokens, over the 96k threshold of the 128k window, so the host asks Stowage to
compact; then one more turn. Around the compacting turn, Python steps inside
the subprocess record what the tests read afterwards: the history before it,
the ``/stowage preview`` before it, ``stowage summary`` / ``stowage_fetch`` of
the window after it, and ``/stowage`` status. The steps only read, so the
compaction, status, summary and lossless checks do not disturb each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.hermes_home import HermesHome
from stowage_dev.runner import DriverResult, Scenario, run_scenario

from .stowage_session import SECRET, script_big_turn, script_warm_up, stowage_home, warm_up

# The model's summary; its reply also echoes the planted secret, which Stowage must mask.
SUMMARY = (
    "## Goal\nInspect the big outputs (SUMMARY-ONE).\n\n## Progress\n### Done\n- inspected five outputs\n\n"
    "## Next Steps\n- continue"
)
SUMMARY_REPLY = SUMMARY + f"\nleaked {SECRET}"

BEFORE_STEP = "import copy\nresult = copy.deepcopy(history)"

PREVIEW_STEP = """
from stowage.host.slash_command import stowage_command
result = {"text": stowage_command("preview"), "figures": engine.preview().as_dict(),
          "threshold": engine.threshold_tokens, "summary_before": stowage_command("summary")}
"""

SUMMARY_STEP = """
import json, subprocess, sys
from pathlib import Path
from stowage.host.slash_command import stowage_command
shown = subprocess.run([str(Path(sys.executable).with_name("stowage")), "--json", "summary"], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL)
handle = json.loads(shown.stdout)["summaries"][-1]["window_handle"]
fetched = json.loads(engine.handle_tool_call("stowage_fetch", {"handle": handle, "mode": "range", "start": 1,
                                                                "count": 500}))
result = {"slash": stowage_command("summary"), "log": engine.state.compaction_log[-1].as_dict(), "handle": handle,
          "fetched": fetched, "cli_code": shown.returncode}
"""

SLASH_STEP = "from stowage.host.slash_command import stowage_command\nresult = stowage_command('')"


@dataclass(frozen=True)
class CompactedSession:
    """What the session left: its Hermes home (state, store, status files), the model server's recorded requests
    and the driver's report. Step ids: ``before``, ``preview``, ``big``, ``summary``, ``slash``, ``after``."""

    home: HermesHome
    llm: FakeLLMServer
    result: DriverResult


def run_compacted_session(llm: FakeLLMServer, make_home: Callable[..., HermesHome]) -> CompactedSession:
    home = stowage_home(make_home)
    script_warm_up(llm, 5)
    script_big_turn(llm)
    llm.on(Match.summary_request(), Reply.say(SUMMARY_REPLY))
    scenario = (
        warm_up(Scenario(), 5)
        .python(BEFORE_STEP, id="before")
        .python(PREVIEW_STEP, id="preview")
        .turn("BIG now", id="big")
        .python(SUMMARY_STEP, id="summary")
        .python(SLASH_STEP, id="slash")
        .turn("after BIG", id="after")
    )
    return CompactedSession(home, llm, run_scenario(home, scenario, check=True))
