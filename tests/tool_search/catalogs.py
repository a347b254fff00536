"""Hand-written tool catalogs and a concept-count embedder for the tool_search tests.

Imported by the tests (``from .catalogs import ...``); the ``schemas`` and ``catalog`` fixtures in ``conftest.py``
hand out fresh copies of ``SCHEMAS``.
"""

from __future__ import annotations

import math


def tool(name: str, description: str = "", **props: str) -> dict:
    """A bare schema whose parameters are string properties with the given help text."""
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {p: {"type": "string", "description": d} for p, d in props.items()},
        },
    }


SCHEMAS = [
    tool(
        "mcp__github__create_issue",
        "Create a new issue in a GitHub repository.",
        title="Issue title",
        body="Markdown body",
    ),
    tool("mcp__github__list_issues", "List issues in a repository, filtered by state.", state="open or closed"),
    tool(
        "mcp__github__create_pull_request",
        "Open a pull request from a branch.",
        head="Source branch",
        base="Target branch",
    ),
    tool(
        "mcp__filesystem__read_file", "Read a file from disk and return its contents.", path="Absolute path of the file"
    ),
    tool(
        "mcp__filesystem__write_file",
        "Write text to a file, replacing it.",
        path="Absolute path",
        content="Text to write",
    ),
    tool("weather_forecast", "Get the weather forecast for a city.", city="City name"),
    tool("sendSlackMessage", "Post a message to a Slack channel.", channel="Channel id", text="Message"),
    tool(
        "calendar.create_event",
        "Schedule a calendar event with attendees.",
        attendees="Email addresses of the people invited",
    ),
]


CONCEPTS = {
    "weather": ("weather", "forecast", "rain", "umbrella", "sunny"),
    "issue": ("issue", "bug", "ticket", "crash"),
    "file": ("file", "disk", "document"),
    "chat": ("slack", "message", "chat", "colleague", "tell"),
    "calendar": ("calendar", "meeting", "event", "schedule"),
}


class FakeEmbedder:
    """Concept-count vectors: knows that an umbrella is about weather, BM25 does not."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        out = []
        for text in texts:
            words = text.lower().replace(".", " ").replace("_", " ").split()
            vec = [float(sum(w.startswith(c) for w in words for c in cs)) for cs in CONCEPTS.values()]
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            out.append([v / norm for v in vec])
        return out
