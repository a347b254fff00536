"""Shared fixtures: small hand-written catalogs that exercise each ranking rule."""

from __future__ import annotations

import pytest

from stowage.tool_search import Catalog


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


@pytest.fixture
def schemas() -> list[dict]:
    return [dict(s) for s in SCHEMAS]


@pytest.fixture
def catalog(schemas) -> Catalog:
    return Catalog.from_schemas(schemas)
