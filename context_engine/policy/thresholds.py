"""The engine's numbers, as functions of what they read: the trigger, how much a compaction keeps, the preflight.

Whether to compact now is :func:`.decision.decide`'s.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from ..config.schema import COMPACT_TAIL_SHARE
from ..config.settings import Settings
from ..records.part_status import LastRequest
from ..view import ViewSettings
from .trigger import trigger_key

logger = logging.getLogger(__name__)

MIN_TAIL_TOKENS = 1000


def default_share(settings: Settings) -> float:
    """The share of the window that triggers a compaction.

    With the lean view on, requests are measured as sent, and the working
    budget is the view's own (chosen by bench/bench_economy.py).
    """
    view = ViewSettings.from_settings(settings)
    return settings.view.compact_at if view.enabled else settings.compaction.threshold


def threshold_tokens(context_length: int, share: float) -> int:
    return int(context_length * share)


@dataclass(frozen=True)
class Trigger:
    """What starts automatic compaction for one model: the configuration key, its share, the tokens."""

    key: str
    share: float
    tokens: int


def trigger_for(
    model_thresholds: Any, model: str, provider: str, context_length: int, *, default: float, view_enabled: bool
) -> Trigger:
    """The trigger of a model binding: a ``model_thresholds`` entry beats the configured ``default`` share."""
    share = model_threshold(model_thresholds, model, provider, context_length)
    key = trigger_key(view_enabled, model_threshold=share is not None)
    share = share if share is not None else default
    return Trigger(key, share, threshold_tokens(context_length, share))


def tail_budget_tokens(settings: Settings, view: ViewSettings, threshold: int) -> int:
    """The tokens of newest history a compaction keeps verbatim."""
    if view.enabled:
        # view.compact_tail_tokens keeps what the model was just working with out of the
        # summary (measured: outputs a compaction hid and the agent then needed were used
        # a few requests later; docs/lean-view.md); at most COMPACT_TAIL_SHARE of the trigger, so a
        # small window still has something to summarize; never less than the hot zone,
        # which the view sends verbatim anyway.
        cap = int(threshold * COMPACT_TAIL_SHARE) if threshold > 0 else view.compact_tail_tokens
        return max(MIN_TAIL_TOKENS, view.hot_tokens, min(view.compact_tail_tokens, cap))
    return max(MIN_TAIL_TOKENS, int(threshold * settings.compaction.target_ratio))


def model_threshold(table: Any, model: str, provider: str, context_length: int) -> float | None:
    """``compression.model_thresholds`` (newer hosts): the share for ``model``, or None.

    The longest matching ``substr`` or ``provider:substr`` wins (the
    provider-qualified key on a tie).  A value up to 1 is a share of the
    window, a larger one a token count; anything else is ignored with a note.
    """
    if not isinstance(table, dict) or not table:
        return None
    best: tuple[tuple[int, bool], Any] | None = None  # (match length, provider-qualified), value
    lowered_model, lowered_provider = (model or "").lower(), (provider or "").lower()
    for raw_key, value in table.items():
        key = str(raw_key).lower()
        want_provider, sep, substr = key.partition(":")
        if sep and want_provider != lowered_provider:
            continue
        needle = substr if sep else key
        rank = (len(needle), bool(sep))
        if needle and needle in lowered_model and (best is None or rank > best[0]):
            best = (rank, value)
    if best is None:
        return None
    try:
        value = float(best[1])
    except (TypeError, ValueError):
        logger.warning("stowage: compression.model_thresholds value %r is not a number; ignored", best[1])
        return None
    if value <= 0 or (1 < value and not context_length):
        return None
    return value if value <= 1 else min(1.0, value / context_length)


@dataclass
class RoughBasis:
    """The host's rough estimate at the newest request whose real usage came back.

    The host's rough figure (chars/4 of each message's ``str()``) overcounts
    code by a fifth or more, while the budget is on real tokens.  So the next
    request is estimated as the last one's real size plus what the rough
    figure grew since then: the growth is new messages, sent whole.
    """

    asked: int = 0  # the rough figure of the newest deferral question (asked right before each request)
    at_usage: int = 0  # ... of the question before the request whose real usage arrived last

    def ask(self, rough_tokens: int) -> None:
        self.asked = rough_tokens

    def usage_arrived(self) -> None:
        self.at_usage = self.asked

    def estimate(self, rough_tokens: int, last_prompt_tokens: int) -> int | None:
        if last_prompt_tokens <= 0 or self.at_usage <= 0:
            return None
        return last_prompt_tokens + max(0, rough_tokens - self.at_usage)


DEEP_HEADROOM_TOKENS = 4000  # a deep view step comes this far under the trigger: the gate looks one request ahead


class ToolsTokens:
    """The tokens of the request's tool list, counted once per distinct list (the newest one is kept)."""

    def __init__(self) -> None:
        self.text = ""
        self.tokens = 0

    def of(self, tools: Any, count_text: Any) -> int:
        text = json.dumps(tools, sort_keys=True, ensure_ascii=False, default=str) if tools else ""
        if text != self.text:
            self.text, self.tokens = text, count_text(text) if text else 0
        return self.tokens


def deep_view_at(threshold: int, tools_tokens: int) -> int:
    """The messages' tokens past which a deep view step is due (0: no trigger to stay under)."""
    return max(0, threshold - tools_tokens - DEEP_HEADROOM_TOKENS) if threshold > 0 else 0


def defer_preflight(
    rough_tokens: int,
    threshold: int,
    last_request: LastRequest | None,
    *,
    view_enabled: bool,
    host_selects_context: bool,
    estimate: int | None = None,
) -> bool:
    """Whether the host's rough pre-turn estimate is over the threshold only by what the view leaves out.

    Older hosts estimate the whole history; what is sent is leaner by what
    the view saved on the last request (it only grows until a compaction).
    ``estimate`` (:class:`RoughBasis`: the last real prompt plus the rough
    growth since) is the closer figure when there is one; the request is
    under the threshold when either says so.  A host that calls
    select_context (0.20+) estimates the selected request at its pre-API gate:
    already lean, nothing to subtract (``host_selects_context``); its
    turn-start preflight (0.20.1 ``agent/turn_context.py``) estimates the
    whole history, like the older hosts.
    """
    if not view_enabled or last_request is None or not threshold or host_selects_context:
        return False
    if estimate is not None and estimate < threshold:
        return True
    return rough_tokens - last_request.saved_tokens < threshold


def as_int(value: Any) -> int:
    """A host figure as an int (None, garbage and strings that are not numbers read as 0)."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
