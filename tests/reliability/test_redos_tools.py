"""The ReDoS catalog through the agent's tools, over large stored outputs.

Every catastrophic-backtracking pattern is sent through stowage_fetch
(mode grep) and stowage_grep against multi-megabyte blobs built to trigger
it.  Each call must come back as a JSON answer (matches, a refusal or a
timeout note).  The run happens in a child process under a hang guard (a
guard against hangs, not a performance bound).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.reliability
HANG_GUARD_S = 240

CHILD = textwrap.dedent(r"""
    import json, sys, tempfile, time
    from pathlib import Path
    from stowage.blobstore import BlobStore
    from stowage.context_engine.store_session.fetch_tools import FETCH, GREP, FetchLimits, FetchTools
    PATTERNS = ["(a+)+$", "(a|aa)+$", "(.*a){20}", "(\\w+\\s?)*$", "(x+x+)+y", "((a+)+)+b", "(\\d+)*\\.",
                "(.*)*x", "(a?){30}a{30}", "(a|ab)(c|bcd)(d*)+z"]
    SUBJECTS = {"a-run": "a" * 100_000 + "!", "lines": ("a" * 60 + "!\n") * 20_000}
    root = Path(tempfile.mkdtemp())
    store = BlobStore(root / "store")
    handles = {name: store.put(text, session_id="s", tool_name="t", kind="spill").handle for name, text in SUBJECTS.items()}
    tools = FetchTools(store, lambda: "s", FetchLimits(grep_time_budget_s=0.5))  # the budget under test, kept short
    calls = answered = errors = cut = 0
    worst = 0.0
    for pattern in PATTERNS:
        for handle in handles.values():
            for name, args in ((FETCH, {"handle": handle, "mode": "grep", "pattern": pattern}),):
                t = time.monotonic()
                reply = json.loads(tools.handle(name, args))
                worst = max(worst, time.monotonic() - t)
                calls += 1; answered += isinstance(reply, dict); errors += "error" in reply
                cut += "truncated" in reply
        t = time.monotonic()
        reply = json.loads(tools.handle(GREP, {"pattern": pattern}))
        worst = max(worst, time.monotonic() - t)
        calls += 1; answered += isinstance(reply, dict); errors += "error" in reply
        cut += "stopped" in reply.get("note", "")
    print(json.dumps({"patterns": len(PATTERNS), "calls": calls, "answered": answered, "refused": errors, "cut_by_time_budget": cut,
                      "slowest_call_s": round(worst, 2)}))
""")  # noqa: E501 - the child's script, one statement a line


def test_redos_catalog_through_the_tools_is_always_answered(figures):
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    figures.update(result)
    assert result["answered"] == result["calls"]
