"""The rooms of ``stowage.context_engine`` and the one replay package, as data for :mod:`stowage_dev.relayout`.

Every name is a whole dotted module name.  ``MODULES`` moves one module, ``PACKAGES`` a package folder with all
of its files, ``ROOMS`` are the packages the move creates, each with the docstring of its ``__init__.py`` (the
layer it is).  ``WATCHED`` are the folders whose own modules must all be planned: a module found there that no
entry names (one added since the plan was written) stays where it is and is reported, so the plan can be
extended.  The layer order these rooms keep is checked by ``tests/test_import_layers.py``.
"""

from __future__ import annotations

CE = "stowage.context_engine"

ROOMS: dict[str, str] = {
    f"{CE}.redaction": "Redaction, ground floor: secrets found and masked in plain text (imports no other room).",
    f"{CE}.config": "Configuration, ground floor: the ``stowage:`` keys, their typed sections and validation.",
    f"{CE}.chat": (
        "The message vocabulary, above redaction: plain chat message dicts, Stowage's markers and stub lines,\n"
        "token counts, what a provider accepts."
    ),
    f"{CE}.summary": (
        "The summary model's side, above chat: what is sent to it (the masked transcript, the prompt, the\n"
        "egress gate), what comes back (checked, grounded), the fallback without a model, and its deadline."
    ),
    f"{CE}.compaction": (
        "One compaction as pure functions, above summary: prune, choose the window, summarize, assemble,\n"
        "and the dry run of it."
    ),
    f"{CE}.policy": (
        "Policy, above the view: when a session compacts (trigger, thresholds, the anti-thrash governor) and\n"
        "the part of a request no compaction can shrink."
    ),
    f"{CE}.records": (
        "Typed records, above compaction and below the view: what a compaction, a session and each of its parts\n"
        "did, what the host tells the engine, and the per-session files other processes read."
    ),
    f"{CE}.session": (
        "One agent's session, above every room but the host adapter: its state, a compaction run on it,\n"
        "request shaping, its status gathered from its parts."
    ),
    f"{CE}.host_adapter": (
        "The host adapter, top floor of the engine: the host contract's members mapped onto the session\n"
        "(keyword tolerance, routing between agents, the engine's own tools)."
    ),
}

MODULES: dict[str, str] = {
    # redaction
    f"{CE}.redact": f"{CE}.redaction.redact",
    f"{CE}.redact_rules": f"{CE}.redaction.rules",
    f"{CE}.redact_match": f"{CE}.redaction.match",
    f"{CE}.redact_values": f"{CE}.redaction.values",
    f"{CE}.redact_formats": f"{CE}.redaction.formats",
    f"{CE}.redact_pairs": f"{CE}.redaction.pairs",
    f"{CE}.redact_escapes": f"{CE}.redaction.escapes",
    f"{CE}.redact_base64": f"{CE}.redaction.in_base64",
    f"{CE}.masking": f"{CE}.redaction.masking",
    f"{CE}.redact_providers": f"{CE}.redaction.providers",
    f"{CE}.redact_commands": f"{CE}.redaction.commands",
    # config
    f"{CE}.config": f"{CE}.config.settings",
    f"{CE}.config_schema": f"{CE}.config.schema",
    f"{CE}.config_sections": f"{CE}.config.sections",
    # chat
    f"{CE}.messages": f"{CE}.chat.messages",
    f"{CE}.markers": f"{CE}.chat.markers",
    f"{CE}.stubs": f"{CE}.chat.stubs",
    f"{CE}.tokens": f"{CE}.chat.tokens",
    f"{CE}.tokenizer_loader": f"{CE}.chat.tokenizer_loader",
    f"{CE}.validate": f"{CE}.chat.validate",
    # summary
    f"{CE}.summary": f"{CE}.summary.reply",
    f"{CE}.summary_prompt": f"{CE}.summary.prompt",
    f"{CE}.transcript": f"{CE}.summary.transcript",
    f"{CE}.fallback": f"{CE}.summary.fallback",
    f"{CE}.egress": f"{CE}.summary.egress",
    f"{CE}.deadline": f"{CE}.summary.deadline",
    # compaction
    f"{CE}.compactor": f"{CE}.compaction.compactor",
    f"{CE}.prune": f"{CE}.compaction.prune",
    f"{CE}.boundaries": f"{CE}.compaction.boundaries",
    f"{CE}.assemble": f"{CE}.compaction.assemble",
    f"{CE}.preview": f"{CE}.compaction.preview",
    # the view gains the host's read dedup check it measures against
    f"{CE}.reread": f"{CE}.view.reread",
    # policy
    f"{CE}.thresholds": f"{CE}.policy.thresholds",
    f"{CE}.trigger": f"{CE}.policy.trigger",
    f"{CE}.governor": f"{CE}.policy.governor",
    f"{CE}.fixed_part": f"{CE}.policy.fixed_part",
    # records
    f"{CE}.compaction_record": f"{CE}.records.compaction_record",
    f"{CE}.session_status": f"{CE}.records.session_status",
    f"{CE}.status_file": f"{CE}.records.status_file",
    f"{CE}.summary_log": f"{CE}.records.summary_log",
    f"{CE}.session_files": f"{CE}.records.session_files",
    f"{CE}.plain_data": f"{CE}.records.plain_data",
    f"{CE}.host_contract": f"{CE}.host_adapter.host_contract",
    f"{CE}.part_status": f"{CE}.records.part_status",
    # names that say which settings or parts they are (issue 44): the store's keys in the blob store's terms, and
    # the message parts (images) compaction takes out
    f"{CE}.store_session.settings": f"{CE}.store_session.store_config",
    f"{CE}.store_session.parts": f"{CE}.store_session.message_parts",
    # and the view's settings and tool search's, beside the one config/settings.py (every `stowage:` key)
    f"{CE}.view.settings": f"{CE}.view.view_settings",
    "stowage.tool_search.settings": "stowage.tool_search.search_settings",
    # session
    f"{CE}.session_state": f"{CE}.session.state",
    f"{CE}.compaction_run": f"{CE}.session.compaction_run",
    f"{CE}.request_shaping": f"{CE}.session.request_shaping",
    f"{CE}.session_parts": f"{CE}.session.parts",
    f"{CE}.limits": f"{CE}.session.limits",
    f"{CE}.preparation": f"{CE}.session.preparation",
    f"{CE}.status_report": f"{CE}.session.status_report",
    f"{CE}.tool_search_embeddings": f"{CE}.session.tool_search_embeddings",
    # host adapter
    f"{CE}.engine": f"{CE}.host_adapter.engine",
    f"{CE}.shared_engine": f"{CE}.host_adapter.shared_engine",
    f"{CE}.engine_tools": f"{CE}.host_adapter.engine_tools",
    # issue 44: the rules of "compact now?" join the one decision in policy/
    f"{CE}.ahead.decide": f"{CE}.policy.rules",
    # replay: one package, command/replay/ (the command, its Hermes engines, its host-agnostic driver)
    "stowage.host.replay_host": "stowage.command.replay.hermes_engines",
}

PACKAGES: dict[str, str] = {"stowage.context_engine.replay": "stowage.command.replay.offline"}

WATCHED: tuple[str, ...] = (CE,)

# Files no rewrite touches: the history (it names the paths of its day), this plan and the tool (their old names
# are the point), and the tool's own test (it builds a small tree of its own).
UNTOUCHED: tuple[str, ...] = (
    "CHANGELOG.md",
    "plugins/stowage_dev/relayout.py",
    "plugins/stowage_dev/relayout_plan.py",
    "tests/test_relayout.py",
)
