"""The lean view's settings, as the view reads them (from ``stowage.view`` and two compaction keys)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config.settings import Settings


@dataclass(frozen=True)
class ViewSettings:
    enabled: bool = True
    hot_tokens: int = 2000
    step_tokens: int = 4000
    pin_turns: int = 20
    min_chars: int = 800
    max_args_chars: int = 500
    condense_reasoning: bool = True
    pin_quoted: bool = True
    stub_lines_chars: int = 0
    stub_names: bool = False
    pin_edited: bool = True
    pin_named: bool = True
    deep_step: bool = True
    collapse_steps: bool = True
    condense_answers: bool = True
    compact_tail_tokens: int = 16_000
    working_set: bool = True
    release_reach: float = 0.0
    step_payback: float = 0.0
    cache_anchor: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> "ViewSettings":
        view = settings.view
        return cls(
            view.enabled,
            view.hot_tokens,
            view.step_tokens,
            view.pin_turns,
            max(view.min_chars, settings.compaction.prune_min_chars),
            settings.compaction.max_tool_args_chars,
            view.condense_reasoning,
            view.pin_quoted,
            view.stub_lines_chars,
            view.stub_names,
            view.pin_edited,
            view.pin_named,
            view.deep_step,
            view.collapse_steps,
            view.condense_answers,
            view.compact_tail_tokens,
            view.working_set,
            view.release_reach,
            view.step_payback,
            view.cache_anchor,
        )
