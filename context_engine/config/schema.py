"""The ``stowage:`` config keys: one table, used for validation and docs.

Each :class:`Key` says its type, range, default, and (for compaction keys) the
built-in ``compression.*`` key it inherits from, so a user switching from the
built-in compressor keeps their settings.  ``docs/configuration.md`` documents
every key in this table and a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NUMBER, INTEGER, BOOLEAN, STRING, CHOICE, STRINGS, INT_MAP = (
    "number",
    "integer",
    "boolean",
    "string",
    "choice",
    "list of strings",
    "map of tool name to integer",
)

# The largest share of the compaction trigger view.compact_tail_tokens may keep (thresholds.py applies it).
COMPACT_TAIL_SHARE = 0.4


@dataclass(frozen=True)
class Key:
    path: str  # "section.name" under the stowage: block
    kind: str
    default: Any
    doc: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    inherits: str | None = None  # a compression.* key honoured when this one is unset

    @property
    def section(self) -> str:
        return self.path.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.path.split(".", 1)[1]

    def accepted(self) -> str:
        """Human description of the accepted values, for error messages."""
        if self.kind == CHOICE:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind in (NUMBER, INTEGER):
            noun = "a number" if self.kind == NUMBER else "a whole number"
            if self.minimum is not None and self.maximum is not None:
                return f"{noun} from {_number(self.minimum)} to {_number(self.maximum)}"
            if self.minimum is not None:
                return f"{noun} of at least {_number(self.minimum)}"
            return noun
        if self.kind == BOOLEAN:
            return "true or false"
        if self.kind == STRINGS:
            return "a list of strings"
        if self.kind == INT_MAP:
            return "a mapping of tool name to a whole number of tokens"
        return "a string"


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


KEYS: tuple[Key, ...] = (
    # -- compaction ---------------------------------------------------------
    Key(
        "compaction.threshold",
        NUMBER,
        0.75,
        "Share of the context window at which automatic compaction starts when the lean view is off (with it on, "
        "view.compact_at is the working budget).",
        0.1,
        0.95,
        inherits="compression.threshold",
    ),
    Key(
        "compaction.target_ratio",
        NUMBER,
        0.20,
        "Size of the verbatim tail kept after compaction, as a share of the threshold in tokens (with the lean view "
        "on, the tail is view.compact_tail_tokens, at least view.hot_tokens).",
        0.05,
        0.8,
        inherits="compression.target_ratio",
    ),
    Key(
        "compaction.protect_first_n",
        INTEGER,
        3,
        "Messages at the start kept verbatim at the first compaction (later compactions keep the summary instead).",
        0,
        50,
        inherits="compression.protect_first_n",
    ),
    Key(
        "compaction.protect_last_n",
        INTEGER,
        8,
        "Minimum number of newest messages kept verbatim. "
        "Inherited values above 8 are capped at 8, as the built-in does.",
        1,
        200,
        inherits="compression.protect_last_n",
    ),
    Key(
        "compaction.abort_on_summary_failure",
        BOOLEAN,
        False,
        "When the summary model fails, keep the messages unchanged instead of inserting the fallback summary.",
        inherits="compression.abort_on_summary_failure",
    ),
    Key(
        "compaction.summary_max_tokens",
        INTEGER,
        8000,
        "Upper bound of the summary length asked from the model.",
        500,
        30000,
    ),
    Key(
        "compaction.summary_timeout_seconds",
        NUMBER,
        0,
        "Deadline of a compaction's summary, counted from its start: the wait for a summary prepared ahead and the "
        "model call share it, and once it is spent the fallback summary is written without another call. 0 keeps "
        "Hermes's own timeout for the call (auxiliary.compression.timeout, at least 300 s) and 300 s for the whole.",
        0,
        3600,
    ),
    Key(
        "compaction.prepare_at",
        NUMBER,
        0.9,
        "Share of the compaction trigger from which the next summary is written ahead on a background thread, so "
        "the compacting turn does not wait for the model: at a turn end, or inside a long turn once the measured "
        "growth per request and the summary model's latency say the trigger comes within that latency (the "
        "compaction then comes as soon as the summary is ready). 0 turns it off.",
        0,
        0.99,
    ),
    Key(
        "compaction.prune_min_chars",
        INTEGER,
        200,
        "Old tool results shorter than this stay verbatim; longer ones give way to a stub or handle.",
        0,
        1_000_000,
    ),
    Key(
        "compaction.max_tool_args_chars",
        INTEGER,
        500,
        "Old tool-call arguments longer than this are shrunk (string values cut, JSON kept valid).",
        100,
        1_000_000,
    ),
    Key(
        "compaction.failure_cooldown_seconds",
        INTEGER,
        600,
        "After a summary failure, automatic compactions use the fallback summary "
        "without calling the model for this long.",
        0,
        86_400,
    ),
    Key(
        "compaction.max_ineffective",
        INTEGER,
        2,
        "Ineffective compactions in a row (still over the threshold afterwards) before Stowage backs off.",
        1,
        20,
    ),
    Key(
        "compaction.backoff_turns",
        INTEGER,
        2,
        "Turns to wait after backing off; doubles with each further ineffective compaction.",
        0,
        100,
    ),
    Key(
        "compaction.provider_profile",
        CHOICE,
        "strict",
        "Message rules the compacted list must satisfy: 'strict' (Anthropic-like role alternation) or 'openai'.",
        choices=("strict", "openai"),
    ),
    # -- lean request view -------------------------------------------------------
    Key(
        "view.enabled",
        BOOLEAN,
        True,
        "Send old tool outputs outside the hot zone as one-line stubs with a handle (the history keeps them whole).",
    ),
    Key(
        "view.hot_tokens",
        INTEGER,
        2000,
        "Newest part of the history sent verbatim, in tokens (never less than the newest tool batch); a compaction "
        "keeps at least this much verbatim (view.compact_tail_tokens; compaction.target_ratio with the view off).",
        1000,
        1_000_000,
    ),
    Key(
        "view.step_tokens",
        INTEGER,
        4000,
        "Cold outputs are stubbed in steps: all at once when the verbatim ones outside the hot zone reach this many "
        "tokens (fewer, larger steps break the prompt cache less often).",
        500,
        1_000_000,
    ),
    Key(
        "view.pin_turns",
        INTEGER,
        20,
        "Outputs the model read back with stowage_fetch / stowage_grep (or quotes, or works on: view.pin_quoted, "
        "view.pin_edited) stay verbatim for this many model turns after each use.",
        0,
        1000,
    ),
    Key(
        "view.pin_quoted",
        BOOLEAN,
        True,
        "An output whose distinctive tokens (an identifier, path or code line first seen in it) a later assistant "
        "message or tool call uses stays verbatim for view.pin_turns model turns after each use, like a read-back.",
    ),
    Key(
        "view.stub_lines_chars",
        INTEGER,
        0,
        "A view stub also carries the lines agents quote from its output, up to this many characters (at most a "
        "quarter of the output): the matching lines of a search, the def / class / import lines of a file read, "
        "the error and assertion lines of a run, the entries of a listing. 0: one-line stubs.",
        0,
        4000,
    ),
    Key(
        "view.stub_names",
        BOOLEAN,
        False,
        "With view.stub_lines_chars, the kept lines take at most half of it and the rest lists the output's "
        "identifiers and paths, the most used first (the names an agent writes code against).",
    ),
    Key(
        "view.pin_edited",
        BOOLEAN,
        True,
        "When a tool call edits or writes a file, the newest earlier output that read that file stays verbatim for "
        "view.pin_turns model turns, like a read-back (the agent is working on that file).",
    ),
    Key(
        "view.pin_named",
        BOOLEAN,
        True,
        "With view.pin_edited, any later tool call that names the file (a search in it, a read of another part, a "
        "run of it) pins its newest read, not only an edit.",
    ),
    Key(
        "view.min_chars",
        INTEGER,
        800,
        "Tool outputs shorter than this are always sent verbatim (never below compaction.prune_min_chars).",
        0,
        1_000_000,
    ),
    Key(
        "view.condense_reasoning",
        BOOLEAN,
        True,
        "Outside the hot zone, an assistant message that led to tool calls is sent as its first 200 characters and "
        "a handle (its calls and their outcomes stay; answers: view.condense_answers).",
    ),
    Key(
        "view.condense_answers",
        BOOLEAN,
        True,
        "Outside the hot zone, an older assistant message without tool calls (an answer the conversation has moved "
        "past: a user message and a reply of the model followed it) is sent as its first 200 characters and a handle.",
    ),
    Key(
        "view.compact_at",
        NUMBER,
        0.37,
        "With the view on, automatic compaction starts when the request as sent reaches this share of the window "
        "(compaction.threshold applies with the view off).",
        0.1,
        0.95,
    ),
    Key(
        "view.compact_tail_tokens",
        INTEGER,
        16_000,
        "With the view on, a compaction keeps this many tokens of the newest history verbatim (at least "
        f"view.hot_tokens, at most {COMPACT_TAIL_SHARE:.0%} of the compaction trigger): what the model was just "
        "working with stays out of the summary.",
        0,
        1_000_000,
    ),
    Key(
        "view.deep_step",
        BOOLEAN,
        True,
        "When the request as sent nears view.compact_at, the view stubs its cold outputs and reasoning at once "
        "(below view.step_tokens) before a compaction is needed: one prompt-cache break instead of a summary.",
    ),
    Key(
        "view.collapse_steps",
        BOOLEAN,
        True,
        "Settled tool steps (outputs stubbed, reasoning condensed) of one turn are sent as one line each in a single "
        "message: the call, its verdict and the handle of its output (the history keeps every step whole).",
    ),
    Key(
        "view.working_set",
        BOOLEAN,
        True,
        "Pins on what the agent works with (quoted outputs, reads of files it edits or names) last to the end of "
        "the user turn, at least view.pin_turns, and end when a later call supersedes the output (the same call "
        "again, a read of the whole file); a superseded output's stub says what superseded it.",
    ),
    Key(
        "view.release_reach",
        NUMBER,
        0,
        "The prompt-cache arithmetic of a view step (0: off): outputs released long ago go with a step only when "
        "their tokens times this are at least the prefix the step would then rewrite down to them; otherwise they "
        "wait for a compaction or a later step.",
        0,
        1_000,
    ),
    Key(
        "view.step_payback",
        NUMBER,
        0,
        "The prompt-cache arithmetic of the view's steps (0: off): a step waits for sqrt(2 x this x pace x "
        "view.hot_tokens) cold tokens when that is more than view.step_tokens (pace: cold tokens a model turn adds). "
        "A step rewrites the hot zone and what it stubs (a cache write costs this many reads more than a read: 11.5 "
        "at reads 0.1x, writes 1.25x) while a cold output still verbatim costs a read per request; that size makes "
        "the two least: fewer, larger steps.",
        0,
        1_000,
    ),
    Key(
        "view.cache_anchor",
        BOOLEAN,
        True,
        "On requests that carry prompt-cache markers (Claude routes: Hermes marks the system prompt and the newest "
        "messages), move the oldest rolling marker to the last message the view's previous step settled, so that "
        "its next step reads the prefix up to there from the cache instead of writing the whole conversation "
        "again. Markers are moved, never added.",
    ),
    # -- tokenizer ------------------------------------------------------------
    Key(
        "tokenizer.encoding",
        CHOICE,
        "o200k_base",
        "tiktoken encoding used to count tokens.",
        choices=("o200k_base", "cl100k_base"),
    ),
    Key(
        "tokenizer.allow_download",
        BOOLEAN,
        False,
        "Let tiktoken download its BPE file when the bundled copy is missing (needs internet).",
    ),
    # -- store ----------------------------------------------------------------
    Key("store.path", STRING, "", "Blob store folder; empty means $HERMES_HOME/stowage."),
    Key("store.ttl_hours", NUMBER, 168, "Blobs not read for this long may be evicted.", 0.01, 87_600),
    Key(
        "store.max_store_mb", NUMBER, 1024, "Total size cap of the blob store, enforced on every write.", 1, 10_000_000
    ),
    Key("store.fetch_grace_hours", NUMBER, 1, "Blobs fetched this recently are never evicted.", 0, 8_760),
    Key("store.tombstone_ttl_days", NUMBER, 30, "How long an evicted blob's tombstone explains what it was.", 0, 3_650),
    Key("store.cross_session_reads", BOOLEAN, False, "Let a session read blobs another session produced."),
    # -- spill ----------------------------------------------------------------
    Key("spill.enabled", BOOLEAN, True, "Spill oversized tool results into the store."),
    Key("spill.threshold_tokens", INTEGER, 4000, "Tool results above this many tokens are spilled.", 200, 10_000_000),
    Key("spill.per_tool", INT_MAP, {}, "Per-tool spill thresholds in tokens, e.g. {terminal: 8000}."),
    Key("spill.never_spill", STRINGS, [], "Tools whose results are never spilled."),
    Key(
        "spill.excerpt_chars",
        INTEGER,
        2000,
        "Size of the excerpt the model sees in place of a spilled output.",
        300,
        50_000,
    ),
    Key(
        "spill.fetch_max_chars", INTEGER, 8000, "Largest response of stowage_fetch (range, grep, json).", 500, 1_000_000
    ),
    Key(
        "spill.full_fetch_max_chars",
        INTEGER,
        50_000,
        "stowage_fetch mode=full is refused above this size (use range or grep).",
        1000,
        10_000_000,
    ),
    # -- tool search -----------------------------------------------------------
    Key(
        "tool_search.enabled",
        CHOICE,
        "auto",
        "Defer MCP and plugin tool schemas behind search bridges: auto (above threshold_pct), on, or off.",
        choices=("auto", "on", "off"),
    ),
    Key(
        "tool_search.threshold_pct",
        NUMBER,
        10,
        "In auto mode, defer once deferrable schemas reach this percent of the context window.",
        0,
        100,
    ),
    Key("tool_search.never_defer", STRINGS, [], "Tools that always stay visible."),
    Key(
        "tool_search.preselect",
        BOOLEAN,
        False,
        "List mode: keep the top preselect_k tools for the latest user message in the tool list (the list then "
        "changes per message, which re-bills the prompt cache; not applied while inline is on).",
    ),
    Key("tool_search.preselect_k", INTEGER, 8, "How many schemas preselect keeps visible.", 1, 64),
    Key(
        "tool_search.preselect_pinned",
        STRINGS,
        [],
        "Deferrable tools preselect always keeps visible, on top of the preselect_k best (still searchable).",
    ),
    Key(
        "tool_search.hybrid",
        BOOLEAN,
        False,
        "Preselect fuses BM25 with an embedding ranking: embedding_endpoint's model, else the offline model of "
        "the embeddings extra (an embedding_endpoint alone turns this on).",
    ),
    Key(
        "tool_search.embedding_endpoint",
        STRING,
        "",
        "OpenAI-compatible embeddings base URL (e.g. http://localhost:11434/v1 for Ollama), or 'auxiliary' for "
        "Hermes's auxiliary provider; empty: none.",
    ),
    Key("tool_search.embedding_model", STRING, "", "Embedding model the endpoint serves (e.g. nomic-embed-text)."),
    Key(
        "tool_search.embedding_api_key_env",
        STRING,
        "",
        "Name of the environment variable holding the endpoint's API key (the key itself is never stored).",
    ),
    Key(
        "tool_search.embedding_timeout_s",
        NUMBER,
        3,
        "One deadline per call to the endpoint (connect, send and the whole answer), and the longest a request "
        "waits for its ranking (made in the background); slower or failing, BM25 alone ranks.",
        0.1,
        120,
    ),
    Key(
        "tool_search.embedding_retry_s",
        NUMBER,
        60,
        "After a failed call the endpoint is left alone this long (BM25 alone meanwhile).",
        0,
        3600,
    ),
    Key(
        "tool_search.inline",
        CHOICE,
        "auto",
        "Inline pre-selection: the inline_k likeliest deferred schemas travel as text in their user message, "
        "the tool list stays fixed (the prompt cache holds); auto: when embedding_endpoint is set.",
        choices=("auto", "on", "off"),
    ),
    Key("tool_search.inline_k", INTEGER, 5, "How many deferred tools each user message's inline block names.", 1, 32),
    Key("tool_search.search_limit", INTEGER, 5, "Default number of hits of stowage_tool_search.", 1, 50),
    Key(
        "tool_search.semantic",
        BOOLEAN,
        False,
        "stowage_tool_search fuses BM25 with an embedding ranking (embedding_endpoint's model, else the "
        "offline model of the embeddings extra, loaded on the first search).",
    ),
    Key(
        "tool_search.listing_max_tokens",
        INTEGER,
        4000,
        "Token budget of the deferred-tool listing in stowage_tool_search's description (0: no listing).",
        0,
        100_000,
    ),
    Key(
        "tool_search.listing_window_pct",
        NUMBER,
        5,
        "The listing also stays within this percent of the context window (the smaller budget wins).",
        0,
        100,
    ),
)

KEYS_BY_PATH = {key.path: key for key in KEYS}
SECTIONS = tuple(dict.fromkeys(key.section for key in KEYS))
