"""Property: a secret planted anywhere never leaves, whole or in part, whatever the prompt builder or fallback cut.

Hypothesis draws where a fake secret sits (user or assistant text, a tool
output, call arguments as a string or a JSON object, the previous summary,
the newest request the summary quotes), in which format the rules know (PEM
private keys, indented YAML and JSON passwords, AWS keys, URL passwords),
how much text surrounds it (placed around the transcript's, the fallback's
and the quote's cuts), and whether the summary model answers or fails.
A leak is any 10 characters of the secret (a PEM body line, part of one) in
a prompt the model received or in the summary left in the history (the
summary log keeps that same body).  The secrets are random letters and
digits from a seed Hypothesis draws; the filler is short lower-case words,
so no 10 characters of it can match a secret by chance.
"""

from __future__ import annotations

import json
import random
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stowage.context_engine.chat.markers import SUMMARY_MARKER
from stowage.context_engine.chat.messages import message_text
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.summary.fallback import build_fallback
from stowage.context_engine.summary.reply import SummaryFailure, unwrap, wrap
from stowage.context_engine.summary.transcript import TranscriptLimits, serialize_window

SUMMARY = "## Goal\nG\n\n## Next Steps\n- go"
FORMATS = ("pem", "openssh", "yaml", "json", "aws-id", "aws-secret", "url")
PLACEMENTS = ("user", "assistant", "tool", "arguments", "previous", "newest")
# where the builders cut: message head and tail, argument cut, verdict and clip lengths, quote and carry-over cuts
CUTS = (0, 60, 120, 160, 200, 300, 600, 1200, 1500, 3000, 4500)
WORDS = ("run", "the", "build", "step", "ok", "cache", "file", "done", "next", "app", "db", "log")


def secret(fmt: str, seed: int, indent: int) -> tuple[str, str]:
    """``(text, secret)``: the format's notation holding a fresh fake secret, and the secret alone."""
    rng = random.Random(seed)

    def r(n: int, chars: str = string.ascii_letters + string.digits) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    if fmt in ("pem", "openssh"):
        body = "\n".join(r(64) for _ in range(rng.randint(1, 30)))
        label = "RSA PRIVATE KEY" if fmt == "pem" else "OPENSSH PRIVATE KEY"
        return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body
    if fmt == "yaml":
        pw = r(20)
        return f"db:\n{' ' * indent}password: {pw}\n{' ' * indent}user: app", pw
    if fmt == "json":
        pw = r(20)
        return json.dumps({"user": "app", "password": pw}), pw
    if fmt == "aws-id":
        key = "AKIA" + r(16, string.ascii_uppercase + string.digits)
        return f"aws id {key}", key
    if fmt == "aws-secret":
        key = r(40)
        return f"aws_secret_access_key = {key}", key
    pw = r(20)
    return f"postgres://app:{pw}@db.internal:5432/app", pw


def fragments(value: str, size: int = 10) -> set[str]:
    runs = "".join(c if c.isalnum() else " " for c in value).split()
    return {run[i : i + size] for run in runs if len(run) >= size for i in range(len(run) - size + 1)}


def filler(length: int, seed: int) -> str:
    rng = random.Random(seed)
    words: list[str] = []
    size = 0
    while size < length:
        word = rng.choice(WORDS)
        words.append(word + ("\n" if rng.random() < 0.1 else " "))
        size += len(word) + 1
    return "".join(words)[:length]


def plant(placement: str, fmt: str, text: str, before: str, after: str, error_line: bool) -> list[dict]:
    """A conversation with ``text`` planted at ``placement``, surrounded by ``before`` and ``after``."""
    line = ("Error: failed with " if error_line else "") + text
    planted = f"{before}\n{line}\n{after}"
    head: list[dict] = [{"role": "system", "content": "You are an agent."}]
    middle: list[dict] = []
    newest = "Thanks, go on."
    if placement == "previous":
        head += [
            {"role": "user", "content": wrap("## Goal\nEarlier work\n\n## Critical Context\n- " + planted)},
            {"role": "assistant", "content": "Ok."},
        ]
    elif placement in ("user", "assistant"):
        other = "assistant" if placement == "user" else "user"
        middle = [{"role": placement, "content": planted}, {"role": other, "content": "Noted."}]
        if placement == "assistant":
            middle = [{"role": "user", "content": "Go."}] + middle[:1]
    elif placement in ("tool", "arguments"):
        if placement == "arguments" and fmt == "json":
            arguments = {"note": before, "config": json.loads(text), "more": after}
        elif placement == "arguments":
            arguments = {"command": planted}
        else:
            arguments = {"command": "deploy"}
        middle = [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "terminal", "arguments": json.dumps(arguments)},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": planted if placement == "tool" else "ok"},
        ]
    elif placement == "newest":
        newest = planted
    return (
        head
        + [{"role": "user", "content": "Please set up the services."}]
        + middle
        + [
            {"role": "assistant", "content": "Working on it."},
            {"role": "user", "content": "Now continue."},
            {"role": "assistant", "content": "Continuing."},
            {"role": "user", "content": newest},
        ]
    )


def compaction(messages: list[dict], fails: bool) -> tuple[list[str], str]:
    prompts: list[str] = []

    def model(prompt: str, runtime: dict, timeout: float | None = None) -> str:
        prompts.append(prompt)
        if fails:
            raise SummaryFailure("http", "HTTP 500")
        return SUMMARY

    engine = StowageEngineCore(
        load_settings({"stowage": {"compaction": {"protect_first_n": 1, "protect_last_n": 1}}}), summary_model=model
    )
    engine.update_model("m", 200_000)
    out = engine.compress(messages, current_tokens=1000, force=True)
    bodies = [unwrap(message_text(m)) or "" for m in out if SUMMARY_MARKER in message_text(m)]
    return prompts, "\n".join(bodies)


placements = st.fixed_dictionaries(
    {
        "placement": st.sampled_from(PLACEMENTS),
        "fmt": st.sampled_from(FORMATS),
        "seed": st.integers(0, 2**32),
        "indent": st.integers(0, 8),
        "before": st.tuples(st.sampled_from(CUTS), st.integers(-90, 40)).map(lambda t: max(0, t[0] + t[1])),
        "after": st.tuples(st.sampled_from(CUTS), st.integers(-90, 40)).map(lambda t: max(0, t[0] + t[1])),
        "error_line": st.booleans(),
    }
)


@given(case=placements, fails=st.booleans())
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_planted_secret_never_reaches_the_model_or_the_stored_summary(case: dict, fails: bool) -> None:
    text, value = secret(case["fmt"], case["seed"], case["indent"])
    before, after = filler(case["before"], case["seed"] + 1), filler(case["after"], case["seed"] + 2)
    messages = plant(case["placement"], case["fmt"], text, before, after, case["error_line"])
    prompts, summary = compaction(messages, fails)
    assert summary, "the window was summarized"
    assert fails or prompts, "the model was asked"
    pieces = fragments(value)
    sent = "\n".join(prompts)
    assert not [p for p in pieces if p in sent], "a piece of the secret reached the summary model"
    assert not [p for p in pieces if p in summary], "a piece of the secret entered the stored summary"


@given(
    case=placements,
    head=st.integers(0, 3000),
    tail=st.integers(0, 1500),
    argument=st.integers(0, 1200),
    total=st.integers(200, 20_000),
)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_transcript_limit_and_no_fallback_cut_lets_a_piece_of_a_secret_through(
    case: dict, head: int, tail: int, argument: int, total: int
) -> None:
    """The builders alone, with every limit drawn: the transcript shrinks its cuts and elides the middle to fit
    ``total``; the fallback clips requests, errors, gists, last words and the carried-over summary."""
    text, value = secret(case["fmt"], case["seed"], case["indent"])
    before, after = filler(case["before"], case["seed"] + 1), filler(case["after"], case["seed"] + 2)
    messages = plant(case["placement"], case["fmt"], text, before, after, case["error_line"])
    window = messages[1:]
    limits = TranscriptLimits(
        message_head_chars=head, message_tail_chars=tail, argument_chars=argument, total_chars=total
    )
    transcript = serialize_window(window, names={"c1": "terminal"}, limits=limits)
    previous = unwrap(message_text(messages[1])) if case["placement"] == "previous" else None
    fallback = build_fallback(window, previous_summary=previous, reason="http: HTTP 500")
    pieces = fragments(value)
    assert not [p for p in pieces if p in transcript], "a piece of the secret is in the transcript"
    assert not [p for p in pieces if p in fallback], "a piece of the secret is in the fallback summary"
