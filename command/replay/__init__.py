"""``stowage replay``: what Stowage would have done to the user's own recorded sessions.

One room, one job per module, imported in this order (no module imports one above it):

* :mod:`.options`  what a run is asked to do (sources, window, price presets, the sweep grid);
* :mod:`.sources`  ``state.db`` and JSONL transcripts -> recorded sessions (hostile rows cost only themselves);
* :mod:`.engines`  the built-in compressor and Stowage, built lazily by :mod:`.hermes_engines`;
* :mod:`.report`   the figures (``--json``); :mod:`.page` the self-contained HTML page from them;
* :mod:`.run`      the run: sessions through the engines (optionally in worker processes), Ctrl-C, the report;
* :mod:`.command`  the arguments, the report file and the exit status.

The host loop, the wire format and the billing are host-agnostic and live in
``stowage.command.replay.offline``.
"""

from .command import add_replay_arguments, replay_command

__all__ = ["add_replay_arguments", "replay_command"]
