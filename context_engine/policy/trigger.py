"""When automatic compaction happens: one rule, and which configuration key decides it.

Two keys hold a share of the context window, and only one of them governs a
session; a third source, the host's ``compression.model_thresholds``, beats
both for the models it names.  The rule (documented in
docs/configuration.md, "When compaction happens"):

1. a matching ``compression.model_thresholds`` entry, if the host passes one;
2. otherwise ``view.compact_at`` while the lean view is on (the default),
   measured on the request as sent;
3. otherwise (``view.enabled: false``) ``compaction.threshold``, measured on
   the whole history.

Status, ``/stowage`` and the replay report read this module, so they name
the same key and leave out the keys that do not apply.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..records.part_status import TriggerStatus

MODEL_THRESHOLDS = "compression.model_thresholds"
VIEW_KEY = "view.compact_at"
PLAIN_KEY = "compaction.threshold"

# Keys that say nothing about a session run with the lean view on / off.
UNUSED_WITH_VIEW = ("compaction.threshold", "compaction.target_ratio")
UNUSED_WITHOUT_VIEW = (
    "view.compact_at",
    "view.compact_tail_tokens",
    "view.hot_tokens",
    "view.step_tokens",
    "view.pin_turns",
    "view.min_chars",
    "view.condense_reasoning",
)


def trigger_key(view_enabled: bool, model_threshold: bool = False) -> str:
    """The configuration key whose share of the window starts automatic compaction."""
    if model_threshold:
        return MODEL_THRESHOLDS
    return VIEW_KEY if view_enabled else PLAIN_KEY


def measured_on(key: str) -> str:
    return "the whole history" if key == PLAIN_KEY else "the request as sent"


def unused_keys(view_enabled: bool) -> tuple[str, ...]:
    return UNUSED_WITH_VIEW if view_enabled else UNUSED_WITHOUT_VIEW


def governing(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Flat ``section.key`` settings without the keys that do not apply (``view.enabled`` decides)."""
    unused = set(unused_keys(settings.get("view.enabled", True) is not False))
    return {key: value for key, value in settings.items() if key not in unused}


def trigger_status(key: str, share: float, threshold_tokens: int, context_length: int) -> TriggerStatus:
    """The ``trigger`` entry of an engine's status."""
    return TriggerStatus(
        key=key,
        share=float(round(share, 4)),
        tokens=threshold_tokens,
        context_length=context_length,
        measured_on=measured_on(key),
    )


def trigger_text(trigger: Mapping[str, Any]) -> str:
    """``view.compact_at 0.5 of the 128,000-token window, on the request as sent``."""
    key, share, window = trigger.get("key"), trigger.get("share"), trigger.get("context_length")
    if not isinstance(key, str) or not isinstance(share, (int, float)):
        return ""
    of = f" of the {int(window):,}-token window" if isinstance(window, int) and window > 0 else " of the window"
    on = trigger.get("measured_on")
    return f"{key} {share:g}{of}" + (f", on {on}" if isinstance(on, str) and on else "")
