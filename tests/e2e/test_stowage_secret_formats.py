"""Issue 31 inside the real host: the formats public scanners know never reach the summary model, and
ordinary configuration reaches it as written.

Warm-up turns of a real session carry, in the user's text, the formats the issue found leaking (built here
from a seeded random source: none is real) and configuration the rules used to mask (``id-token: write``,
``automountServiceAccountToken: false``, Python names after ``sk_`` / ``am_``, "basic troubleshooting.");
the big turn makes the host ask Stowage to compact, and the summary request must hold every ordinary line
and none of the secrets.
"""

from __future__ import annotations

import base64
import random
import string

import pytest

from stowage_dev.fake_llm import FakeLLMServer, Match, Reply
from stowage_dev.runner import Scenario, run_scenario

from .stowage_session import assert_valid_request, script_big_turn, script_warm_up, stowage_home

pytestmark = pytest.mark.e2e

_RNG = random.Random(31)


def _fake(n: int) -> str:
    return "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(n))


_PW = "FAKEpw" + _fake(12)
_PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + _fake(64) + "\n-----END RSA PRIVATE KEY-----\n"
_TLS_KEY = base64.b64encode(_PEM.encode()).decode()
# (text in the user's message, the secret that must not reach the summary model)
PLANTED = [
    (f"my ~/.netrc:\nmachine api.example.com\n  login me\n  password {_PW}", _PW),
    (f"the secret:\nkind: Secret\ndata:\n  tls.key: {_TLS_KEY}", _TLS_KEY[40:100]),
    (f"the pod env:\nenv:\n  - name: DB_PASSWORD\n    value: {_PW}x", f"{_PW}x"),
    (f"age key AGE-SECRET-KEY-1{_fake(200).upper()[:58]}", None),
    (f"url https://storage.googleapis.com/b/o?X-Goog-Signature={_fake(64).lower()}", None),
    (f"bot token MT{_fake(24)}.{_fake(6)}.{_fake(38)}", None),
    (f"set OPENAI_KEY={_fake(48)}", None),
    (f"and DB_PASS={_PW}y", f"{_PW}y"),
    (f"oauth client secret GOCSPX-{_fake(28)}", None),
    # found by bench/scanner_coverage.py against gitleaks' and trufflehog's rules
    (f"config.yaml:\ntwitter: {_fake(50)}", None),
    (f"sqlcmd -S db -U sa -P {_PW}z -Q 'SELECT 1'", f"{_PW}z"),
    (f"export MAPBOX_TOKEN=pk.{_fake(60)}.{_fake(22)}", None),
    (f"keytool -list -storepass {_PW}k -keystore a.jks", f"{_PW}k"),
    (f"nvapi-{_fake(64)}", None),
]
ORDINARY = [
    "permissions:\n  contents: read\n  id-token: write",
    "spec:\n  automountServiceAccountToken: false",
    "sk_learn_model = LogisticRegression()\nam_pm_format = '%p'",
    "Start with basic troubleshooting.",
    "password: ${{ secrets.PYPI_API_TOKEN }}",
    "[Service]\nLoadCredential=db-password:/etc/creds/db",
    "ssh -p 2222 deploy@host\npsql -h db -p 5432 -U app shop",
    "linear = nn.Linear(768, 768)\ntwitter_handle: example_dev",
]


def _secret(text: str, secret: str | None) -> str:
    return secret if secret is not None else text.rsplit(" ", 1)[-1].split("=", 1)[-1]


def test_planted_formats_stay_out_and_ordinary_configuration_goes_in(fake_llm: FakeLLMServer, make_home) -> None:
    home = stowage_home(make_home)
    turns = 1 + len(PLANTED) + len(ORDINARY)  # the first turn is the protected head: never summarized
    script_warm_up(fake_llm, turns)
    script_big_turn(fake_llm)
    fake_llm.on(Match.summary_request(), Reply.say("## Goal\nG (SUMMARY-ONE)\n\n## Next Steps\n- go"))

    scenario = Scenario().turn("WARM-0 please inspect the big output")
    for i, text in enumerate([text for text, _ in PLANTED] + ORDINARY, start=1):
        scenario.turn(f"WARM-{i} please inspect the big output. Note:\n{text}")
    scenario.turn("BIG go", id="big")
    result = run_scenario(home, scenario, check=True)

    assert result.step("big")["engine"]["compression_count"] == 1
    (summary_call,) = fake_llm.summary_requests()
    prompt = summary_call.text
    missing = [i for i in range(1, turns) if f"WARM-{i} " not in prompt]
    assert missing == [], f"planted turns not summarized (the test would prove nothing): {missing}"
    leaked = [text.split("\n", 1)[0] for text, secret in PLANTED if _secret(text, secret) in prompt]
    assert leaked == [], f"reached the summary model: {leaked}"
    for text in ORDINARY:
        for line in text.split("\n"):
            assert line in prompt, f"ordinary line altered: {line!r}"
    assert_valid_request(fake_llm.last_main_request())
