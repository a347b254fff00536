"""Test-only plugin: real MCP servers' tool lists as Hermes plugin tools (never shipped).

Reads the JSON written by ``stowage_dev.mcp_catalog.capture_catalog`` (path
in ``STOWAGE_MCP_CATALOG``) and registers every tool of every server as
``<server>_<tool>`` in toolset ``catalog-<server>``: the real names,
descriptions and input schemas, so tool search is exercised on a catalog
nobody wrote for these tests, while each subprocess stays as fast as a
plain plugin load (no server is started).

``STOWAGE_MCP_CATALOG_SERVERS=a,b`` registers only those servers.

Each handler appends ``{"kind": "call", "tool", "server", "mcp_tool",
"args", "session_id"}`` to ``STOWAGE_MCP_CATALOG_CALLS`` (default
``$HERMES_HOME/mcp_catalog_calls.jsonl``) and returns a small JSON echo.
The plugin also records ``pre_tool_call``, ``post_tool_call`` and
``transform_tool_result`` (``{"kind": "hook", "hook", "tool_name",
"tool_call_id"}``) for every tool, since the harness probe's recorder does
not subscribe to ``pre_tool_call``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

CATALOG_ENV = "STOWAGE_MCP_CATALOG"
CALLS_ENV = "STOWAGE_MCP_CATALOG_CALLS"
SERVERS_ENV = "STOWAGE_MCP_CATALOG_SERVERS"
_HOOKS = ("pre_tool_call", "post_tool_call", "transform_tool_result")


def _calls_path() -> Path:
    explicit = os.environ.get(CALLS_ENV)
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("HERMES_HOME", ".")) / "mcp_catalog_calls.jsonl"


def _append(record: dict[str, Any]) -> None:
    with _calls_path().open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, default=repr, sort_keys=True) + "\n")


def tool_name(server: str, tool: str) -> str:
    """Same rule as ``stowage_dev.mcp_catalog.plugin_tool_name`` (kept local: the plugin is loaded by path)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in f"{server}_{tool}")


def _handler(name: str, server: str, mcp_tool: str) -> Callable[..., str]:
    def handle(args: dict[str, Any], **kwargs: Any) -> str:
        _append(
            {
                "kind": "call",
                "tool": name,
                "server": server,
                "mcp_tool": mcp_tool,
                "args": args,
                "session_id": kwargs.get("session_id"),
            }
        )
        return json.dumps({"ok": True, "tool": name, "echo": args}, sort_keys=True)

    return handle


def _hook(hook: str) -> Callable[..., None]:
    def callback(**kwargs: Any) -> None:
        _append(
            {
                "kind": "hook",
                "hook": hook,
                "tool_name": kwargs.get("tool_name"),
                "tool_call_id": kwargs.get("tool_call_id"),
            }
        )

    return callback


def register(ctx) -> None:  # noqa: ANN001 - the host's PluginContext
    path = os.environ.get(CATALOG_ENV)
    if not path:
        return  # nothing captured: the plugin registers no tools
    catalog = json.loads(Path(path).read_text(encoding="utf-8"))
    only = {s.strip() for s in os.environ.get(SERVERS_ENV, "").split(",") if s.strip()}
    for server, info in sorted(catalog["servers"].items()):
        if only and server not in only:
            continue
        for tool in info["tools"]:
            name = tool_name(server, tool["name"])
            schema = {
                "name": name,
                "description": tool.get("description") or "",
                "parameters": tool.get("inputSchema") or {"type": "object", "properties": {}},
            }
            ctx.register_tool(name, f"catalog-{server}", schema, _handler(name, server, tool["name"]))
    for hook in _HOOKS:
        ctx.register_hook(hook, _hook(hook))
