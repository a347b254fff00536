"""The secret formats issue 41 found leaking, generated from each format's definition, and their near misses.

Each format is written as its definition (a literal head, then parts drawn
from a character set with a length), as trufflehog's detectors, gitleaks'
rules and detect-secrets' plugins document it; samples are drawn here from a
seeded random source for several seeds (none is real), so the rules are held
to the format and not to one sample.  Every sample must be masked bare and in
the notations text carries it in; the near misses (names, branches, code,
prose sharing a head) must pass unchanged.
"""

from __future__ import annotations

import json
import random
import string

import pytest

from stowage.context_engine.redaction.masking import mask
from stowage.context_engine.redaction.redact import MASK, redact

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
LOWER_ALNUM, HEX = LOWER + DIGITS, "0123456789abcdef"
URLSAFE = ALNUM + "_-"
Part = tuple[str, int, int] | str  # (characters, shortest, longest) or a literal

# name -> the format's parts, in order
FORMATS: dict[str, list[Part]] = {
    "github-server-long": ["ghs_", (ALNUM + "_", 41, 120)],
    "github-oauth-long": ["gho_", (ALNUM + "_", 41, 80)],
    "gitlab-routable": ["glpat-", (ALNUM + "_=-", 27, 60), ".", (LOWER_ALNUM, 2, 2), ".", (LOWER_ALNUM, 9, 9)],
    "aws-appsync": ["da2-", (LOWER_ALNUM, 26, 26)],
    "aws-key-id-a3t": ["A3T", (UPPER + DIGITS, 1, 1), (UPPER + "234567", 16, 16)],
    "aws-key-id-abia": ["ABIA", (UPPER + "234567", 16, 16)],
    "cloudflare-account-token": ["cfat_", (ALNUM, 40, 40), (HEX, 8, 8)],
    "cloudflare-user-token": ["cfut_", (ALNUM, 40, 40), (HEX, 8, 8)],
    "cloudflare-global-key": ["cfk_", (ALNUM, 40, 40), (HEX, 8, 8)],
    "vault-batch": ["hvb.", (ALNUM + "_.-", 60, 200)],
    "vault-legacy": ["s.", (ALNUM, 12, 12), (DIGITS, 2, 2), (ALNUM, 10, 20)],
    "grafana-cloud": ["glc_eyJ", (ALNUM + "+/=", 60, 160)],
    "grafana-service-account": ["glsa_", (ALNUM + "_", 41, 41)],
    "replicate": ["r8_", (ALNUM + "_-", 37, 37)],
    "fly-io": ["FlyV1 fm", (DIGITS, 1, 40), "_", (ALNUM + "+/=_-", 500, 700)],
    "new-relic-license": [(HEX, 32, 32), "FFFFNRAL"],
    "new-relic-license-eu": ["eu01xx", (HEX, 26, 26), "FFFFNRAL"],
    "new-relic-mobile": ["AA", (HEX, 40, 40), "-NRMA"],
    "brevo": ["xkeysib-", (URLSAFE, 81, 81)],
    "buildkite": ["bkua_", (LOWER_ALNUM, 40, 40)],
    "rubygems": ["rubygems_", (ALNUM, 48, 48)],
    "sonarcloud": ["sqco_", (ALNUM, 59, 59)],
    "atlassian-ctt": ["ATCTT3xFfG", (ALNUM + "+/=_-", 40, 180), "=", (ALNUM, 8, 8)],
    "atlassian-att": ["ATATT3", (ALNUM + "_=-", 186, 186)],
    "bitbucket-app-password": ["ATBB", (ALNUM + "_=.-", 20, 40)],
    "posthog": ["phx_", (ALNUM + "_", 43, 48)],
    "apify": ["apify_api_", (ALNUM + "-", 36, 36)],
    "pganalyze": ["pgar_", (ALNUM, 27, 27)],
    "zoho": ["1000.", (HEX, 32, 32), ".", (HEX, 32, 32)],
    "salesforce-refresh": ["5Aep861", (ALNUM + "._=", 80, 120)],
    "entra-secret-dash": ["-", (ALNUM, 2, 2), (DIGITS, 1, 1), "Q~", (ALNUM + "_~.-", 31, 34)],
    "entra-refresh": ["0.A", (URLSAFE, 50, 80), ".Ag", (URLSAFE, 250, 300)],
    "azure-apim-repository": ["git&", (DIGITS, 12, 12), "&", (ALNUM + "+/", 85, 85), (ALNUM, 1, 1), "=="],
    "hubspot-pat": [
        "pat-na1-",
        (ALNUM, 8, 8),
        "-",
        (ALNUM, 4, 4),
        "-",
        (ALNUM, 4, 4),
        "-",
        (ALNUM, 4, 4),
        "-",
        (ALNUM, 12, 12),
    ],
    "klaviyo": ["pk_", (HEX, 34, 34)],
    "spectral": ["spu-", (LOWER_ALNUM, 32, 32)],
    "trufflehog-enterprise": ["thog-secret-", (HEX, 32, 32)],
    "typeform-short": ["tfp_", (ALNUM + "_", 40, 58)],
    "figma-pat": ["figp_", (ALNUM + "_=-", 40, 54)],
    "endor-labs": ["endr+", (ALNUM + "-", 16, 16)],
    "salad-cloud": ["salad_cloud_", (ALNUM, 1, 7), "_", (ALNUM, 30, 60)],
    "square": ["EAAA", (URLSAFE, 22, 60)],
    "jwt-base64": ["ZXlK", (URLSAFE, 40, 80)],
    "defined-networking": ["dnkey-", (LOWER_ALNUM + "=_-", 26, 26), "-", (LOWER_ALNUM + "=_-", 52, 52)],
    "huggingface-org": ["api_org_", (LOWER, 34, 34)],
    "facebook-percent": [(DIGITS, 15, 16), "%", (LOWER_ALNUM + "_-", 27, 40)],
    "deno-deploy": ["ddw_", (ALNUM, 36, 36)],
    "circleci-pat-mixed-hex": ["CCIPAT_", (ALNUM, 22, 22), "_", ("0123456789abcdefABCDEF", 40, 40)],
    "atlassian-ctt-short": ["ATCTT3xFfG", (ALNUM + "+/=_-", 4, 12), "=", (ALNUM, 8, 8)],
    "mailchimp-mixed-case": [("0123456789abcdefABCDEF", 32, 32), "-us", (DIGITS, 2, 2)],
    "mailgun-key": ["key-", (LOWER, 16, 16), (DIGITS, 2, 2), (LOWER_ALNUM, 14, 14)],
    "gemini-master": ["master-", (UPPER, 6, 6), (DIGITS, 2, 2), (ALNUM, 12, 12)],
}


def sample(parts: list[Part], rng: random.Random) -> str:
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        else:
            chars, low, high = part
            out.append("".join(rng.choice(chars) for _ in range(rng.randint(low, high))))
    return "".join(out)


NOTATIONS = (
    "{s}",
    "export SERVICE_TOKEN={s}",
    '{{"credential": "{s}", "region": "eu-west-1"}}',
    "service:\n  api_key: {s}\n  timeout: 30",
    "curl -H 'Authorization: Bearer {s}' https://api.example.com/v1",
    "INFO connecting with {s} (attempt 1)",
    "docker run -d -e SERVICE_KEY={s} registry.internal/worker:1.8.2",
)


def _pieces(secret: str) -> list[str]:
    """Eight-character pieces of the secret's generated letters and digits (a partial mask leaks too)."""
    runs = "".join(c if c.isalnum() else " " for c in secret).split()
    return [run[i : i + 8] for run in runs if len(run) >= 8 for i in range(0, len(run) - 7, 4)]


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_formats_are_masked_from_their_definition(name, seed):
    secret = sample(FORMATS[name], random.Random(f"{seed}:{name}"))
    for notation in NOTATIONS:
        line = notation.format(s=secret)
        context = line.replace(secret, "")
        for out in (mask(line), mask(json.dumps({"command": line}))):
            leaked = [p for p in _pieces(secret) if p in out and p not in context]
            assert not leaked, f"{name} in {notation!r}: {out!r}"
        assert redact(redact(line)) == redact(line)


@pytest.mark.parametrize(
    "text",
    [
        '    std::string password("{s}");',
        'char passwd[25] = "{s}";',
        'char *db_key = "{s}";',
        'if ("{s}" == private_key) {{',
        'if (auth_key != "{s}") {{',
        'pwd := "{s}"',
        "pwd: '{s}'",
        '"pwd" => "{s}",',
        'contraseña = "{s}"',
        "contrasena := `{s}`",
        'std::string contraseña("{s}");',
    ],
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_passwords_in_code_are_masked(text, seed):
    rng = random.Random(seed)
    value = rng.choice(UPPER) + rng.choice(DIGITS) + "".join(rng.choice(ALNUM + "!@#%^+~.") for _ in range(14))
    out = mask(text.format(s=value))
    assert value not in out and MASK in out, out


def test_softlayer_ssh2_and_glued_remains_are_masked():
    rng = random.Random(9)
    key = "".join(rng.choice(LOWER_ALNUM) for _ in range(64))
    assert key not in mask(f"SOFTLAYER_URL=https://api.softlayer.com/soap/v3.1/{key}")
    body = "\n".join("".join(rng.choice(ALNUM + "+/") for _ in range(64)) for _ in range(4))
    block = f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{body}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"
    assert mask(f"$ cat ~/.ssh/id\n{block}\nok") == f"$ cat ~/.ssh/id\n{MASK}\nok"
    # an Airtable token: its base64 JSON body is masked decoded first; the rest of the token goes with it
    payload = "eyJ1c2VySWQiOiJ1c3JBQkNERUZHSElKS0xNTiIsInNlY3JldCI6ImFiYzEyMyJ9"
    token = "oaa" + "".join(rng.choice(ALNUM) for _ in range(14)) + ".v1." + payload + "." + "ab12" * 16
    assert mask(f"AIRTABLE_TOKEN={token} next") == f"AIRTABLE_TOKEN={MASK} next"


def test_provider_client_ids_that_look_generated_are_masked():
    assert mask("PROD_ADOBE_CLIENT_ID=06d4d1fe630af722890411e0682e927a") == f"PROD_ADOBE_CLIENT_ID={MASK}"
    assert mask('linked_in_app_id = "l6mjpq8bkusnx1"') == f'linked_in_app_id = "{MASK}"'
    assert mask('"secret_key" => \'sk_24l38J0r@vMn6DYXwosmWy=~RQb_H"') == f'"secret_key" => \'{MASK}"'


@pytest.mark.parametrize(
    "text",
    [
        "'__qualname__': '%s.%s.RelatedObjectDoesNotExist' % (",
        "s.addEventListenerForAllOfThem()",
        "git checkout master-backport-of-the-fix",
        "account-settings-page-redesign-v2",
        "key-value-store-for-the-session-cache",
        "test_something_long_enough_to_be_a_name",
        "live_reload_enabled_for_development_only",
        "if token == 'COLLATE':",
        'if (password == "")',
        'check_password("hunter")',
        "discord_client_id: 293913702176982336",
        "ADOBE_CLIENT_ID=my-adobe-app",
        "PWD=/home/user/project",
        'pwd = "/home/user/project"',
        "hooks.slack.com/services/[REDACTED] stays",
        "name=[REDACTED] and v1.2.3-[REDACTED]",
        "API_KEY_ENV=OPENAI_API_KEY",
        "glpat- is the prefix of GitLab tokens",
        "see https://docs.example.com/1000.release-notes.html",
    ],
)
def test_near_misses_stay(text):
    assert mask(text) == text
