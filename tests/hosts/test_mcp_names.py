"""Both MCP naming schemes: ``mcp__server__tool`` (0.18+) and ``mcp_server_tool`` (0.17.0)."""

from __future__ import annotations

from stowage.tool_search.catalog import Catalog
from stowage.tool_search.tokens import split_tool_name


def test_both_schemes_split_into_server_and_tool():
    assert split_tool_name("mcp__github__create_issue") == ("github", "create_issue")
    assert split_tool_name("mcp_github_create_issue") == ("github", "create_issue")
    assert split_tool_name("read_file") == ("", "read_file")
    assert split_tool_name("mcp_") == ("", "mcp_")


def test_both_schemes_imply_the_mcp_toolset():
    catalog = Catalog.from_schemas(
        [
            {"name": "mcp__github__create_issue", "description": "Create an issue."},
            {"name": "mcp_memory_read_graph", "description": "Read the graph."},
        ]
    )
    assert catalog.get("mcp__github__create_issue").toolset == "mcp-github"
    assert catalog.get("mcp_memory_read_graph").toolset == "mcp-memory"
