"""The rooms keep their layer order: a room imports only rooms on a lower floor.

The rooms are the package folders of the shipped package and, inside ``context_engine``, its subpackages.
``LAYERS`` lists them from the ground up; a room may import any room of a LOWER layer and none of its own
layer or above.  The import graph is the one the circle test builds (``tests/test_import_cycles.py``): every
``import`` of a module counts, a function-level one and one under ``if TYPE_CHECKING:`` included.  The one
pair of rooms that know each other, the Hermes glue and the command line, share a floor and are allowed
each other by name (``MUTUAL``): the slash command runs the command line, the command line asks the glue for
the host's version.  The glue reaches the engine through one seam: of the rooms below it imports only the host
adapter, the configuration and the records (``HOST_MAY_IMPORT``).  The dashboard's API (``dashboard/plugin_api.py``,
not a package: Hermes loads the file alone) imports the package by name at run time (``_sub("command.live")``);
those names count as its imports.  Hermes itself is imported only by the glue, the dashboard's API (the home it
serves) and the replay's engine builder; the replay's driver (``command/replay/offline/``) is host-agnostic: it
imports the context engine, the two leaves and itself.  The floors are data in ``tests/layers.py``.
"""

from __future__ import annotations

import ast

import pytest

from .import_graph import graph, modules
from .layers import CE, HERMES, HERMES_ALLOWED, HOST_MAY_IMPORT, LAYERS, MUTUAL

OFFLINE = "stowage.command.replay.offline"


ROOMS = {room: floor for floor, rooms in enumerate(LAYERS) for room in rooms}


def room_of(module: str) -> str:
    """The room a module stands in: the longest room name that is it or one of its packages."""
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        if ".".join(parts[:cut]) in ROOMS:
            return ".".join(parts[:cut])
    raise AssertionError(f"{module} is in no room of LAYERS")


def violations(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b (room -> room)`` for each import from a room to one on its own floor or above."""
    found = []
    for module, targets in sorted(graph.items()):
        here = room_of(module)
        for target in sorted(targets):
            there = room_of(target)
            if here == there or (here, there) in MUTUAL or ROOMS[there] < ROOMS[here]:
                continue
            found.append(f"{module} -> {target} ({here} on floor {ROOMS[here]}, {there} on floor {ROOMS[there]})")
    return found


def test_every_module_is_in_a_room():
    for module in modules():
        room_of(module)


def test_every_context_engine_subpackage_is_a_room():
    """A new subpackage of context_engine gets a floor here before it ships."""
    for module, path in modules().items():
        if path.name == "__init__.py" and module.startswith(CE + ".") and module.count(".") == 2:
            assert module in ROOMS, f"{module} is a package of context_engine without a floor in LAYERS"


def test_rooms_import_only_lower_floors():
    found = violations(graph())
    assert not found, "imports against the layer order:\n" + "\n".join(found)


def host_reaching_past_the_seam(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for each import of the Hermes glue outside ``HOST_MAY_IMPORT``."""
    return [
        f"{module} -> {target}"
        for module, targets in sorted(graph.items())
        if room_of(module) == "stowage.host"
        for target in sorted(targets)
        if not any(target == room or target.startswith(room + ".") for room in HOST_MAY_IMPORT)
    ]


def test_the_glue_imports_only_the_adapter_config_and_records():
    found = host_reaching_past_the_seam(graph())
    assert not found, "the Hermes glue reaches past the host adapter:\n" + "\n".join(found)


def test_a_glue_import_past_the_seam_is_found():
    assert host_reaching_past_the_seam({"stowage.host.x": {f"{CE}.view.reread", f"{CE}.records.host_facts"}}) == [
        f"stowage.host.x -> {CE}.view.reread"
    ]


def test_the_dashboard_api_is_in_the_graph_with_its_run_time_imports():
    assert {"stowage.command.live", f"{CE}.records.status_file"} <= graph()["stowage.dashboard.plugin_api"]


def test_only_the_glue_imports_hermes():
    found = []
    for module, path in modules().items():
        if module.startswith(HERMES_ALLOWED):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            found += [f"{module}: {name}" for name in names if name.split(".")[0] in HERMES]
    assert not found, "Hermes imported outside the glue:\n" + "\n".join(found)


def test_the_replay_driver_is_host_agnostic():
    found = [
        f"{module} -> {target}"
        for module, targets in sorted(graph().items())
        if module.startswith(OFFLINE)
        for target in sorted(targets)
        if not target.startswith((OFFLINE, CE + ".", "stowage.blobstore", "stowage.tool_search"))
    ]
    assert not found, "the offline replay driver imports the glue or the command line:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({f"{CE}.chat.messages": {f"{CE}.redaction.redact"}}, []),
        ({f"{CE}.chat.stubs": {f"{CE}.summary.egress"}}, [f"{CE}.chat.stubs -> {CE}.summary.egress"]),
        ({f"{CE}.redaction.redact": {f"{CE}.config.schema"}}, [f"{CE}.redaction.redact -> {CE}.config.schema"]),
        ({"stowage.host.commands": {"stowage.command.main"}, "stowage.command.main": {"stowage.host.version"}}, []),
        ({"stowage.blobstore.store": {"stowage.tool_search.session"}}, ["stowage.blobstore.store -> "]),
    ],
)
def test_a_violation_is_found(graph, expected):
    """Upward and same-floor imports fail, downward ones and the one mutual pair pass."""
    found = violations(graph)
    assert len(found) == len(expected)
    for line, start in zip(found, expected, strict=True):
        assert line.startswith(start)
