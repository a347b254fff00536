"""What the engine's model binding sets for its session, as one read-only snapshot: :class:`Limits`.

The host binds a model to the engine (``update_model``: the window, the
trigger, the runtime of the summary call); the session's behaviour
(``session_state.SessionState``) reads those numbers, never the engine.  The
engine hands a fresh snapshot to each call, so the session always sees the
binding of the moment and cannot change it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from ..compaction.inputs import Archive
from ..config.settings import Settings


class SummaryModel(Protocol):
    """The summary call the host glue attaches: the reply text, or SummaryFailure.

    ``runtime`` is the bound model's (model, provider, base_url, api_key,
    api_mode), passed on to the host as it is; ``timeout`` the call's own, in
    seconds (what is left of the compaction's deadline), or None for the host's.
    """

    def __call__(self, prompt: str, runtime: Mapping[str, Any], timeout: float | None = None) -> str: ...


@dataclass(frozen=True)
class Limits:
    settings: Settings
    context_length: int = 0  # the model's window in tokens
    threshold_tokens: int = 0  # automatic compaction starts here (trigger.py)
    threshold_key: str = ""  # the configuration key behind the threshold
    threshold_share: float = 0.0  # its share of the window
    runtime: Mapping[str, Any] = field(default_factory=dict)  # model, provider, base_url, api_key, api_mode
    summary_model: SummaryModel | None = None  # None: no summary call is attached (the fallback summary)
    archive: Archive | None = None  # injected (tests); otherwise the store session's archive

    @property
    def model(self) -> str | None:
        """The bound model's name, for records and the status line (None: not bound yet)."""
        return self.runtime.get("model") or None
