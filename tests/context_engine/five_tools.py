"""Five deferred tools whose descriptions the stand-in embedder (``ConceptEmbedder``) tells apart, for the tool
search tests of the engine (embeddings, inline pre-selection); each test shapes the schema it needs.

Imported by the tests (``from .five_tools import FIVE_TOOLS``).
"""

from __future__ import annotations

FIVE_TOOLS: tuple[tuple[str, str], ...] = (
    ("proc_ls", "Show processes on the host."),
    ("fs_read", "Read a file's contents."),
    ("gh_new_issue", "Open a bug ticket on GitHub."),
    ("chat_post", "Send a chat message to a channel."),
    ("maps_route", "Directions between two places."),
)
