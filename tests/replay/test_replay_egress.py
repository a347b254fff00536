"""The replay's summary prompts pass the egress gate too: a key across a transcript cut never reaches the stand-in.

A real recorded session (three chained trajectories at the host's minimum
window, so Stowage compacts) with fake private keys planted at the end of
long user messages in its middle, each key's BEGIN line in the part the
transcript cuts out.  The stand-in summarizer records every prompt it
receives; no 10 characters of any key line may be in one.
"""

from __future__ import annotations

import copy
import os
import random
import string
from pathlib import Path
from typing import Any

import pytest

from stowage.command.replay.offline import HostDriver, StandInSummarizer, TokenMeter, chain_sessions, read_transcripts

# the shared data beside the checkout, as tests/replay/test_real_engines.py finds it; STOWAGE_TRAJECTORIES overrides
DATA = Path(
    os.environ.get("STOWAGE_TRAJECTORIES")
    or Path(__file__).resolve().parents[3] / "shared" / "data" / "agent-trajectories.jsonl.gz"
)
WINDOW = 64_000
PLANTS = 6


class RecordingStandIn(StandInSummarizer):
    """The replay's stand-in, keeping each prompt it receives."""

    def __init__(self, count_text: Any) -> None:
        super().__init__(count_text)
        self.prompts: list[str] = []

    def __call__(self, prompt: str, *args: Any, **kwargs: Any) -> str:
        self.prompts.append(prompt)
        return super().__call__(prompt, *args, **kwargs)


def planted_session(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """``messages`` with a fake key closing a long text in ``PLANTS`` user messages spread over the middle."""
    rng = random.Random(31)
    out = copy.deepcopy(messages)
    users = [i for i, m in enumerate(out) if m.get("role") == "user" and isinstance(m.get("content"), str)]
    middle = users[len(users) // 5 : len(users) * 4 // 5]
    lines: list[str] = []
    for n, index in enumerate(middle[:: max(1, len(middle) // PLANTS)][:PLANTS]):
        body = ["".join(rng.choice(string.ascii_letters + string.digits) for _ in range(64)) for _ in range(30)]
        lines += body
        key = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----"
        out[index]["content"] += f"\nEGRESS-PLANT-{n} notes:\n" + "n " * 2500 + key
    return out, lines


def leaks(lines: list[str], text: str) -> int:
    return sum(any(line[i : i + 10] in text for i in range(len(line) - 9)) for line in lines)


@pytest.fixture()
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_no_planted_key_line_reaches_the_replay_stand_in(hermes_home: Path) -> None:
    if not DATA.is_file():
        pytest.skip(f"trajectory data not found at {DATA}")
    from stowage.command.replay.hermes_engines import FALLBACK_TOOLS, StowageHost

    session = next(chain_sessions(read_transcripts(DATA, limit=3), chain=3))
    messages, lines = planted_session(session.messages)
    meter = TokenMeter()
    summarizer = RecordingStandIn(meter.count_text)
    host = StowageHost({}, home=hermes_home, tools=FALLBACK_TOOLS, window=WINDOW)
    HostDriver(meter, window=WINDOW).replay(messages, host.target(summarizer, session.id))

    sent = "\n".join(summarizer.prompts)
    assert summarizer.prompts and "EGRESS-PLANT-" in sent, "a planted message was summarized"
    assert "chars omitted here" in sent, "a long message was cut"
    assert leaks(lines, sent) == 0, f"{leaks(lines, sent)} of {len(lines)} key lines reached the stand-in"
