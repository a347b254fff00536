"""``python3 run.py demo`` as a user runs it: what it prints, and the comparison it makes.

The demo drives two real Hermes sessions (Stowage, then the built-in
compressor on the same script) and prints what a user needs: no developer
lines, no default replies of the scripted model, measured figures only; why
each compaction happened, and one savings figure, the same in the session,
in `stowage status` and in the dashboard tab.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]

NOISE = (
    "OK (default reply)",
    "roles ",
    "debug:",
    "host warnings",
    "Traceback",
    "BuildBackendWarning",
    "not selected",
    "rule=",
    "time per phase",
    "phase 4 sanitize",
    "streams SSE",
)


def test_the_demo_prints_what_stowage_did_and_compares_it_with_the_builtin() -> None:
    # the README's command (CI runs it in a clean checkout, where run.py finds the venv it just set up)
    run = subprocess.run(
        [sys.executable, str(ROOT / "run.py"), "demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    print(out)
    for noise in NOISE:
        assert noise not in out, f"the demo printed a developer line ({noise!r})"
    assert "Hermes runs Stowage as its context engine" in out
    assert re.search(r"trigger: a request of [\d,]+ tokens \(view\.compact_at 0\.\d+ of the 128,000-token window", out)
    # the one "saved" sentence of stowage status, spills included
    saved = re.search(
        r"([\d,]+) tokens saved over (\d+) requests \(sent ([\d,]+) of ([\d,]+) message tokens; "
        r"([\d,]+) by the lean view; ([\d,]+) by spilled outputs; summed over the requests",
        out,
    )
    assert saved, out
    total, _, sent, unshaped, by_view, by_spills = (int(g.replace(",", "")) for g in saved.groups())
    assert total == unshaped - sent == by_view + by_spills and by_spills > 0
    # one savings figure: what the session's engine reported, `stowage status` printed and the dashboard tab shows
    assert re.search(
        rf"`stowage status` prints: {saved.group(1)} tokens saved over {saved.group(2)} requests$", out, re.M
    )
    assert re.search(rf"the dashboard tab shows: tokens saved {saved.group(1)}$", out, re.M), out
    pairs = re.findall(r"([\d,]+) tokens saved|tokens saved ([\d,]+)", out)
    figures = {(before or after).replace(",", "") for before, after in pairs}
    assert figures == {str(total)}, figures
    # why each compaction happened: the FIX turn's reported size (at once, near the window), then /compress
    compactions = re.findall(r"^  compaction (\d+):\n  \w+\n    why: (.+)$", out, re.M)
    assert [n for n, _ in compactions] == ["1", "2"], out
    assert compactions[0][1].startswith("automatic: the provider reported 112,000 prompt tokens for the FIX turn")
    assert compactions[1][1].startswith("you typed /compress with focus 'parser bug'")
    assert "100,000" not in out
    # both engines ran the same script; Stowage's figures come from the requests the server received
    rows = {
        m.group(1).strip(): (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
        for m in re.finditer(r"^  ([a-z ,]+?)\s+([\d,]+)\s+([\d,]+)$", out, re.M)
    }
    assert rows["largest request, tokens"][0] < rows["largest request, tokens"][1]
    assert rows["summary calls"][0] >= 1 and rows["summary calls"][1] >= 1
    assert rows["requests to the model"][1] > 0
