"""What the host loop plays a session through (:class:`ReplayTarget`) and what it reports (:class:`SessionResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .billing import SessionBill
from .stand_in import StandInSummarizer


@dataclass
class ReplayTarget:
    """One engine, as a host would run it for one session."""

    label: str
    engine: Any
    session_id: str = "replay-session"
    tools: list[dict[str, Any]] = field(default_factory=list)  # request tools, engine schemas included
    middlewares: Sequence[Callable[..., Any]] = ()  # llm_request middleware
    tool_result_hooks: Sequence[Callable[..., Any]] = ()  # transform_tool_result hooks
    turn_end_hooks: Sequence[Callable[..., Any]] = ()  # on_session_end plugin hooks (end of each user turn)
    history_hooks: Sequence[Callable[..., Any]] = ()  # post_llm_call plugin hooks (turn end, with the history)
    request_hooks: Sequence[Callable[..., Any]] = ()  # pre_api_request plugin hooks (each request, with the history)
    summarizer: StandInSummarizer | None = None
    is_summary_text: Callable[[str], bool] | None = None
    model: str = "replay-model"
    compression_enabled: bool = True
    close: Callable[[], None] | None = None  # release the engine's resources after the session
    host_version: str = "0.19.0"  # 0.20+: prune_tool_results_only after a tool batch; 0.22+: no post-tool
    # compaction while awaiting real usage (see HostDriver's docstring)


@dataclass
class SessionResult:
    session_id: str
    label: str
    window: int
    bill: SessionBill
    user_turns: int = 0
    compactions: int = 0  # boundaries made (the host's count)
    compress_calls: int = 0
    noop_compressions: int = 0
    aborted_compressions: int = 0
    compaction_cpu_s: float = 0.0
    over_window_requests: int = 0
    middleware_changed: int = 0
    middleware_errors: int = 0
    hook_replaced_results: int = 0
    cache_breaks_after_compaction: int = 0  # requests that do not extend the previous one, right after a compaction
    cache_breaks_other: int = 0  # ... for any other reason (e.g. a request view rewriting older messages)
    rewritten_tokens_other: int = 0  # tokens of the previous request not reused by such a request
    engine_compression_count: int = 0
    final_history_messages: int = 0
    summaries_prepared: int = 0  # summary calls started ahead of a compaction (included in summary_calls)
    summaries_prepared_used: int = 0  # compactions whose summary was prepared ahead
    summaries_prepared_wasted: int = 0  # prepared calls no compaction used (discarded or failed)
    summaries_prepared_wasted_tokens: int = 0  # their prompts' tokens (as the engine counts them)
    tool_result_prunes: int = 0  # prune_tool_results_only commits (0.20+ hosts)
    # timed replays (clock.py): per compaction boundary, the simulated seconds compress() blocked the turn,
    # and whether its summary was prepared ahead
    compaction_waits: list[float] = field(default_factory=list)
    compaction_prepared: list[bool] = field(default_factory=list)
    # ... and how it was served: wait_s, outcome (used, none, stale, failed), why, when (diagnostics)
    compaction_served: list[dict[str, Any]] = field(default_factory=list)
    summaries_wasted_reasons: list[str] = field(default_factory=list)  # one per wasted prepared call
    summary_prompt_tokens: list[int] = field(default_factory=list)

    @property
    def peak_request_tokens(self) -> int:
        return self.bill.peak_request_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "engine": self.label,
            "window": self.window,
            "requests": self.bill.requests,
            "prompt_tokens": self.bill.prompt_tokens,
            "cached_tokens": self.bill.cached_tokens,
            "summary_calls": self.bill.summary_calls,
            "summary_input_tokens": self.bill.summary_tokens,
            "billed_tokens": self.bill.billed_tokens,
            "cost": dict(self.bill.cost),
            "peak_request_tokens": self.bill.peak_request_tokens,
            "over_window_requests": self.over_window_requests,
            "user_turns": self.user_turns,
            "compactions": self.compactions,
            "compress_calls": self.compress_calls,
            "noop_compressions": self.noop_compressions,
            "aborted_compressions": self.aborted_compressions,
            "compaction_cpu_s": self.compaction_cpu_s,
            "middleware_changed": self.middleware_changed,
            "middleware_errors": self.middleware_errors,
            "hook_replaced_results": self.hook_replaced_results,
            "cache_breaks_after_compaction": self.cache_breaks_after_compaction,
            "cache_breaks_other": self.cache_breaks_other,
            "rewritten_tokens_other": self.rewritten_tokens_other,
            "engine_compression_count": self.engine_compression_count,
            "final_history_messages": self.final_history_messages,
            "summaries_prepared": self.summaries_prepared,
            "summaries_prepared_used": self.summaries_prepared_used,
            "summaries_prepared_wasted": self.summaries_prepared_wasted,
            "summaries_prepared_wasted_tokens": self.summaries_prepared_wasted_tokens,
            "tool_result_prunes": self.tool_result_prunes,
            "compaction_waits": list(self.compaction_waits),
            "compaction_prepared": list(self.compaction_prepared),
            "compaction_served": [dict(row) for row in self.compaction_served],
            "summaries_wasted_reasons": list(self.summaries_wasted_reasons),
        }


class Observer:
    """Receives the driver's events (tests record them; the default ignores them)."""

    def event(self, name: str, **data: Any) -> None:  # pragma: no cover - default no-op
        pass
