"""Real MCP tool lists for the tool-search tests: start npm reference servers, capture ``tools/list``.

The tool-search tests need a realistic catalog (dozens of schemas written by
other people, with the descriptions and parameter shapes real servers ship),
but driving every server through Hermes's MCP client in every scenario would
make each subprocess slower and flakier.  So the servers are started once,
over stdio with the Python ``mcp`` client, and their ``tools/list`` answers
are written to a JSON file; the ``mcp_catalog`` test plugin
(``plugins/stowage_dev/plugins/mcp_catalog``) registers them as ordinary Hermes
plugin tools.  One test still runs a real server through Hermes itself.

The servers come from npm, installed by ``run.py`` into the directory
named by ``STOWAGE_NPM_DIR`` (``<dir>/node_modules/@modelcontextprotocol/...``).
Nothing here downloads anything.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Mapping

NPM_DIR_ENV = "STOWAGE_NPM_DIR"
# Read by the mcp_catalog plugin in the Hermes subprocess: the captured JSON.
CATALOG_ENV = "STOWAGE_MCP_CATALOG"
SCOPE = "@modelcontextprotocol"


@dataclass(frozen=True)
class ServerSpec:
    """How to start one reference server without credentials.

    ``args`` may hold ``{workdir}``, replaced by a scratch directory (the
    filesystem server needs an allowed root; the memory server a file).
    Placeholder credentials are enough: nothing is called that needs them.
    """

    name: str
    package: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


SERVERS: tuple[ServerSpec, ...] = (
    ServerSpec("everything", f"{SCOPE}/server-everything", ("stdio",)),
    ServerSpec("filesystem", f"{SCOPE}/server-filesystem", ("{workdir}",)),
    ServerSpec("memory", f"{SCOPE}/server-memory", env={"MEMORY_FILE_PATH": "{workdir}/memory.jsonl"}),
    ServerSpec("github", f"{SCOPE}/server-github", env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_placeholder"}),
    ServerSpec(
        "slack", f"{SCOPE}/server-slack", env={"SLACK_BOT_TOKEN": "xoxb-placeholder", "SLACK_TEAM_ID": "T00000000"}
    ),
    ServerSpec("sequential-thinking", f"{SCOPE}/server-sequential-thinking"),
    ServerSpec("gitlab", f"{SCOPE}/server-gitlab", env={"GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-placeholder"}),
    ServerSpec("google-maps", f"{SCOPE}/server-google-maps", env={"GOOGLE_MAPS_API_KEY": "placeholder"}),
    ServerSpec("brave-search", f"{SCOPE}/server-brave-search", env={"BRAVE_API_KEY": "placeholder"}),
    ServerSpec("postgres", f"{SCOPE}/server-postgres", ("postgresql://placeholder@127.0.0.1:1/none",)),
    ServerSpec("everart", f"{SCOPE}/server-everart", env={"EVERART_API_KEY": "placeholder"}),
    ServerSpec(
        "aws-kb-retrieval",
        f"{SCOPE}/server-aws-kb-retrieval",
        env={"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "placeholder", "AWS_SECRET_ACCESS_KEY": "placeholder"},
    ),
)


class NpmServersMissing(RuntimeError):
    """``STOWAGE_NPM_DIR`` is unset or does not hold the servers; the message says what to run."""


def npm_dir() -> Path | None:
    value = os.environ.get(NPM_DIR_ENV, "").strip()
    return Path(value) if value else None


def server_script(root: Path, spec: ServerSpec) -> Path:
    """The server's JS entry point, from its package.json ``bin`` (no shell shims)."""
    package_dir = root / "node_modules" / spec.package
    manifest = package_dir / "package.json"
    if not manifest.is_file():
        raise NpmServersMissing(
            f"{spec.package} is not installed under {root} (run `python3 run.py setup`, or npm install it there)"
        )
    bin_field = json.loads(manifest.read_text(encoding="utf-8")).get("bin")
    relative = bin_field if isinstance(bin_field, str) else next(iter((bin_field or {}).values()), None)
    if not relative:
        raise NpmServersMissing(f"{spec.package} has no bin entry in {manifest}")
    return package_dir / relative


def server_command(root: Path, spec: ServerSpec, workdir: Path) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, extra env) to start *spec* over stdio with ``node``."""
    node = shutil.which("node")
    if node is None:
        raise NpmServersMissing("node is not on PATH (the MCP reference servers need Node.js 18+)")
    fill = {"workdir": str(workdir)}
    args = [str(server_script(root, spec)), *(a.format(**fill) for a in spec.args)]
    env = {k: v.format(**fill) for k, v in spec.env.items()}
    return node, args, env


def package_version(root: Path, spec: ServerSpec) -> str:
    manifest = root / "node_modules" / spec.package / "package.json"
    return str(json.loads(manifest.read_text(encoding="utf-8")).get("version", "?"))


async def _list_tools(root: Path, spec: ServerSpec, workdir: Path, timeout: float) -> list[dict[str, Any]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import get_default_environment, stdio_client

    command, args, extra_env = server_command(root, spec, workdir)
    params = StdioServerParameters(
        command=command, args=args, env={**get_default_environment(), **extra_env}, cwd=str(workdir)
    )
    tools: list[dict[str, Any]] = []
    with open(os.devnull, "w", encoding="utf-8") as quiet:  # servers log their banner to stderr
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=timedelta(seconds=timeout)) as session:
                await asyncio.wait_for(session.initialize(), timeout)
                cursor: str | None = None
                while True:
                    page = await asyncio.wait_for(session.list_tools(cursor=cursor), timeout)
                    tools += [
                        {"name": t.name, "description": t.description or "", "inputSchema": t.inputSchema}
                        for t in page.tools
                    ]
                    cursor = page.nextCursor
                    if not cursor:
                        return tools


async def _capture_all(root: Path, specs: tuple[ServerSpec, ...], workdir: Path, timeout: float) -> dict[str, Any]:
    async def one(spec: ServerSpec) -> tuple[str, dict[str, Any]]:
        scratch = workdir / spec.name
        scratch.mkdir(parents=True, exist_ok=True)
        try:
            tools = await _list_tools(root, spec, scratch, timeout)
        except NpmServersMissing:
            raise
        except BaseException as exc:  # noqa: BLE001 - name the server that failed
            raise RuntimeError(f"MCP server {spec.name} ({spec.package}) did not list its tools: {exc!r}") from exc
        return spec.name, {"package": spec.package, "version": package_version(root, spec), "tools": tools}

    results = await asyncio.gather(*(one(spec) for spec in specs))
    return {"servers": dict(results)}


def capture_catalog(
    out_path: Path, *, root: Path | None = None, specs: tuple[ServerSpec, ...] = SERVERS, timeout: float = 30.0
) -> dict[str, Any]:
    """Start every server once, write ``{"servers": {name: {package, version, tools}}}`` to *out_path*.

    Servers run concurrently (each takes a fraction of a second) in a
    scratch folder next to *out_path*.
    """
    root = root if root is not None else npm_dir()
    if root is None:
        raise NpmServersMissing(f"{NPM_DIR_ENV} is not set (run.py sets it after installing the servers)")
    workdir = out_path.parent / "mcp-scratch"
    workdir.mkdir(parents=True, exist_ok=True)
    catalog = asyncio.run(_capture_all(root, specs, workdir, timeout))
    out_path.write_text(json.dumps(catalog, indent=1, sort_keys=True), encoding="utf-8")
    return catalog


def plugin_tool_name(server: str, tool: str) -> str:
    """``<server>_<tool>`` with anything but letters, digits and ``_`` turned into ``_``."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in f"{server}_{tool}")


def plugin_toolset(server: str) -> str:
    return f"catalog-{server}"


def catalog_schemas(catalog: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The catalog as the OpenAI tool definitions Hermes would send (plugin names)."""
    out: list[dict[str, Any]] = []
    for server, info in sorted(catalog["servers"].items()):
        for tool in info["tools"]:
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": plugin_tool_name(server, tool["name"]),
                        "description": tool["description"],
                        "parameters": tool.get("inputSchema") or {"type": "object", "properties": {}},
                    },
                }
            )
    return out
