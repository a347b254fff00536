"""Recording real sessions with big tool outputs into a Hermes home's state.db, for the ``stowage replay`` tests."""

from __future__ import annotations

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply, ToolCall
from stowage_dev.hermes_home import HermesHome
from stowage_dev.runner import DriverResult, Scenario, run_scenario

OUTPUT_CHARS = 16_000  # ~4k tokens each: over Stowage's spill threshold (larger ones Hermes itself would preview)


def record_big_outputs(
    llm: FakeLLMServer,
    home: HermesHome,
    *,
    warm_ups: int,
    big_turns: int,
    outputs_per_turn: int,
    distinct_turns: int | None = None,
) -> DriverResult:
    """One ended session: ``warm_ups`` plain turns, then ``big_turns`` turns ``BIG<i>`` that each call
    ``harness_big_output`` ``outputs_per_turn`` times at once (call ids ``call_big<i>x<k>``).

    With ``distinct_turns``, turn ``i`` returns the outputs of turn ``i % distinct_turns``: the same texts come
    back in a later turn, as when a file is read again (the store keeps one blob for both).  (Within one turn
    Hermes drops a repeated call before it runs.)"""
    home.install_harness_probe()
    for index in range(big_turns):
        llm.on(
            Match.user_turn(f"BIG{index}"),
            Reply.tool(
                *[
                    ToolCall(
                        "harness_big_output",
                        {"chars": OUTPUT_CHARS, "token": f"T{index % (distinct_turns or big_turns)}x{k}"},
                        id=f"call_big{index}x{k}",
                    )
                    for k in range(outputs_per_turn)
                ]
            ),
        )
    scenario = Scenario()
    for index in range(warm_ups):
        scenario.turn(f"warm-up turn {index}")
    for index in range(big_turns):
        scenario.turn(f"BIG{index} read it", id=f"big{index}")
    scenario.end_session()
    return run_scenario(home, scenario, check=True)
