"""The ``stowage`` commands and their one-line help, without importing them.

``hermes stowage --help`` is built while Hermes assembles its own parser, on
every ``hermes`` invocation that looks for plugin commands: listing the
commands from here keeps that cheap (no store, no config, no replay code),
and ``build_parser`` takes the same lines, so the two lists cannot differ.
"""

from __future__ import annotations

COMMANDS: dict[str, str] = {
    "status": "store location and size, counts, retention limits, tokenizer, recent sessions",
    "doctor": "is Stowage the engine Hermes runs (and the fix when not); verify the store, config and tokenizer",
    "setup": "lift Hermes's caps that cut tool outputs before Stowage sees them (prints and runs each `hermes "
    "config set` line) and enable the dashboard tab",
    "summary": "the newest compaction summary of a session, as inserted into its history",
    "blobs": "list, show or print stored blobs (ls, show, cat, rm)",
    "purge": "delete one session's stored outputs, or all stored more than DAYS ago",
    "gc": "apply the retention policy now",
    "dashboard": "link the dashboard tab where Hermes's dashboard looks (pip installs), or unlink it",
    "uninstall": "take Stowage out of config.yaml (Hermes back on its compressor) before removing the code; "
    "--purge also deletes the store",
    "replay": "replay recorded sessions through Hermes's built-in compressor and Stowage, offline, "
    "and report what each would have billed",
    "help": "this list, or one command's options (help COMMAND)",
}


def command_list(prog: str = "stowage") -> str:
    """``  status     store location ...`` lines, for the help of ``stowage`` and ``hermes stowage``."""
    width = max(len(name) for name in COMMANDS)
    lines = [f"  {name.ljust(width)}  {text}" for name, text in COMMANDS.items()]
    return (
        "commands:\n"
        + "\n".join(lines)
        + f"\n\n`{prog} COMMAND --help` shows a command's options; `{prog}` alone runs status."
    )
