"""The gate for what is written or shown (``redaction.shown``) and the invisible-character stage, as pure functions."""

from __future__ import annotations

import logging
import random

from stowage.context_engine.redaction.invisible import visible_copy
from stowage.context_engine.redaction.redact import redact
from stowage.context_engine.redaction.shown import MaskingFilter, mask_logs, shown_error, shown_record

KEY = "sk-proj-" + "Qx7Lm2Vb9Tc4Rz8Wd1Hf6Jk3Np5Sg0Ya2Ue7Io9Pl4Mn"


def test_shown_record_masks_every_string_and_keeps_identifiers():
    record = {
        "session_id": f"s-{KEY}",
        "summary_error": f"http: Bearer {KEY}",
        "nested": [{"why": f"token={KEY}"}, ("tuple", f"Authorization: Bearer {KEY}")],
        "count": 3,
    }
    out = shown_record(record)
    assert out["session_id"] == record["session_id"]  # readers match on it
    assert KEY not in repr({k: v for k, v in out.items() if k != "session_id"})
    assert out["count"] == 3 and isinstance(out["nested"][1], tuple)
    assert record["summary_error"].endswith(KEY)  # the input is not mutated


def test_shown_record_returns_a_record_without_secrets_as_it_is():
    record = {"a": "plain words", "b": ["more plain words", 1, None]}
    assert shown_record(record) is record


def test_shown_error_names_the_type_and_masks_the_message():
    assert shown_error(RuntimeError(f"url https://x.example/v1?key={KEY}")) == (
        "RuntimeError: url https://x.example/v1?key=[REDACTED]"
    )
    assert shown_error(ValueError()) == "ValueError"


def test_the_log_filter_masks_the_message_and_the_traceback():
    try:
        raise RuntimeError(f"Bearer {KEY}")
    except RuntimeError:
        record = logging.LogRecord("stowage.x", logging.WARNING, __file__, 1, "failed: %s", (f"token={KEY}",), None)
        import sys

        record.exc_info = sys.exc_info()
    assert MaskingFilter().filter(record)
    assert KEY not in record.getMessage() and KEY not in (record.exc_text or "")
    assert "[REDACTED]" in record.getMessage() and "RuntimeError" in (record.exc_text or "")


def test_log_records_are_masked_on_loggers_made_before_and_after_the_mask(caplog):
    package = "stowage_masking_probe"
    early = logging.getLogger(package + ".early")
    assert mask_logs(package) == 1 and mask_logs(package) == 0  # once, however often the engine starts
    late = logging.getLogger(package + ".made.later")  # a module imported lazily, after the engine started
    with caplog.at_level(logging.INFO):
        early.warning("summary failed: %s", f"Authorization: Bearer {KEY}")
        try:
            raise RuntimeError(f"url https://x.example/v1?key={KEY}")
        except RuntimeError:
            late.exception("prepared summary failed")
        logging.getLogger(package).info("token=%s", KEY)
    assert [r.name for r in caplog.records] == [package + ".early", package + ".made.later", package]
    shown = caplog.text
    assert KEY not in shown and shown.count("[REDACTED]") >= 4  # message, traceback line, exception text, info
    assert "RuntimeError" in shown and "prepared summary failed" in shown


def test_invisible_characters_around_secrets_and_in_plain_text_stay_where_they_were():
    rng = random.Random(41)
    marks = ["\u200b", "\u200d", "\u00ad", "\ufeff", "\u202e", "\u2066"]
    for _ in range(200):
        words = [rng.choice(["deploy", "the", "service", "ok", "日本", "👩", "x=1"]) for _ in range(rng.randint(1, 12))]
        text = "".join(w + (rng.choice(marks) if rng.random() < 0.4 else " ") for w in words)
        assert redact(text) == text
        copy = visible_copy(text)
        assert copy is None or all(copy.original[copy.original_index(i)] == ch for i, ch in enumerate(copy.text))
        with_key = f"{text} key: {KEY[:10]}{rng.choice(marks)}{KEY[10:]} {text}"
        masked = redact(with_key)
        assert KEY[:10] not in masked and KEY[12:] not in masked
        assert masked.startswith(text) and masked.endswith(text), masked
