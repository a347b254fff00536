"""plugin.yaml as the plugin catalog's validator sees it (hermes-upstream.md §4), applied to the real plugin.

The checks: the manifest parses with name/version/description, a strict
``requires_hermes`` floor, a ``config_schema`` of the documented shape, valid
``requires_env`` names; an import probe records every ``register_*`` call of
``register()``: a hook, tool or middleware registered but not declared fails;
no clash with the host's built-in tool names.  That no module outside the
glue imports the host is checked over the whole package by
``tests/test_import_layers.py`` (``test_only_the_glue_imports_hermes``).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

import stowage
from stowage.context_engine.config.schema import KEYS
from stowage.host import manifest
from stowage.host.host_support import MIN_HERMES

from .plugin_context import RecordingCtx

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_YAML = ROOT / "plugin.yaml"
V2_FIELDS = {
    "name",
    "version",
    "description",
    "author",
    "kind",
    "requires_env",
    "provides_tools",
    "provides_hooks",
    "manifest_version",
    "api_version",
    "requires_plugins",
    "python_dependencies",
    "config_schema",
    "license",
    "homepage",
    "tags",
    "provides_middleware",
    "requires_hermes",
}
RESERVED = {"tool_search", "tool_describe", "tool_call"}


def loaded() -> dict:
    return yaml.safe_load(PLUGIN_YAML.read_text())


def test_the_manifest_file_is_the_generated_one():
    assert PLUGIN_YAML.read_text() == manifest.render(), "regenerate: python -m stowage.host.manifest > plugin.yaml"


def test_config_schema_is_stowages_own_schema():
    schema = loaded()["config_schema"]
    assert list(schema) == [key.path for key in KEYS]
    for key in KEYS:
        entry = schema[key.path]
        assert set(entry) == {"type", "default", "description", "required"}
        assert entry["type"] in {"str", "int", "float", "bool", "list", "dict"}
        default = list(key.default) if isinstance(key.default, tuple) else key.default
        assert entry["default"] == default and key.doc in entry["description"]


def test_manifest_fields():
    data = loaded()
    assert data["manifest_version"] == 1 and set(data) <= V2_FIELDS  # 0.19/0.20 installers refuse 2
    assert all(isinstance(data[f], str) and data[f] for f in ("name", "version", "description"))
    assert data["version"] == stowage.__version__
    assert re.fullmatch(r">=\d+\.\d+\.\d+", data["requires_hermes"]) and data["requires_hermes"] == f">={MIN_HERMES}"
    assert all(re.fullmatch(r"[A-Z_][A-Z0-9_]*", str(name)) for name in data.get("requires_env", []))


def test_declared_matches_registered(home):
    data = loaded()
    ctx = RecordingCtx()
    stowage.register(ctx)
    assert len(ctx.engines) == 1
    assert set(ctx.hooks) <= set(data["provides_hooks"]), "a hook registered but not declared fails validation"
    assert set(data["provides_hooks"]) <= set(ctx.hooks)
    assert set(ctx.tools) <= set(data["provides_tools"])
    assert set(ctx.middleware) == set(data["provides_middleware"])
    assert "capabilities" not in data  # 0.20.1 / 0.22 know only consent-gated ids there; others warn at each start
    engine_tools = {schema["name"] for schema in ctx.engines[0].get_tool_schemas()}
    assert engine_tools == set(data["provides_tools"])


def test_no_clash_with_built_in_tool_names():
    from toolsets import _HERMES_CORE_TOOLS

    provided = set(loaded()["provides_tools"])
    assert not provided & (set(_HERMES_CORE_TOOLS) | RESERVED)
