"""The floors of the shipped package, as data: the layer test (``test_import_layers.py``) holds the imports to
them, the architecture test (``test_architecture_doc.py``) holds docs/architecture.md's layer block to them."""

from __future__ import annotations

CE = "stowage.context_engine"

# from the ground up; a room is a package, its modules and subpackages
LAYERS: list[set[str]] = [
    {"stowage.blobstore", "stowage.tool_search"},
    {f"{CE}.redaction", f"{CE}.config"},
    {f"{CE}.chat"},
    {f"{CE}.summary"},
    {f"{CE}.compaction"},
    {f"{CE}.records"},
    {f"{CE}.view"},
    {f"{CE}.store_session", f"{CE}.ahead", f"{CE}.policy"},
    {f"{CE}.session"},
    {f"{CE}.host_adapter"},
    {CE},  # the package's own __init__ and any module not in a room yet
    {"stowage.host", "stowage.command"},
    {"stowage.dashboard"},  # the dashboard tab's API (dashboard/plugin_api.py): reads the command line's figures
    {"stowage"},
]
MUTUAL = {("stowage.host", "stowage.command"), ("stowage.command", "stowage.host")}
# one seam: of the context engine, the Hermes glue imports only the host adapter, the configuration and the records
# (it may import the command line, its mutual partner, and nothing else below)
HOST_MAY_IMPORT = ("stowage.host", "stowage.command", f"{CE}.host_adapter", f"{CE}.config", f"{CE}.records")
# the host's top-level modules (as tests/hosts/test_manifest.py names them for the core folders)
HERMES = {
    "agent",
    "hermes_cli",
    "tools",
    "model_tools",
    "toolsets",
    "run_agent",
    "gateway",
    "cli",
    "hermes_constants",
    "hermes_state",
    "hermes_logging",
}
# the glue, the dashboard's API (the Hermes home it serves: hermes_constants), and the replay's two modules that
# build Hermes's own compressor (its engines, checked for at start)
HERMES_ALLOWED = (
    "stowage.host",
    "stowage.dashboard",
    "stowage.command.replay.engines",
    "stowage.command.replay.hermes_engines",
)
