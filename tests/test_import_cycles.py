"""No import circles in the shipped package.

Builds the import graph of every module that installs under ``stowage``
(the host glue, the command line, context_engine, blobstore, tool_search:
every package folder of the repository root), from the source with ``ast``: every ``import``
anywhere in a module counts, a function-level one included (a circle that
only works because one side imports late is still a circle), and so does
one under ``if TYPE_CHECKING:`` (it says the two modules know each other).
Fails with the circles it finds.
"""

from __future__ import annotations

from .import_graph import imports, modules


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_covers_the_package():
    found = modules()
    for name in (
        "stowage",
        "stowage.command.main",
        "stowage.context_engine.host_adapter.engine",
        "stowage.blobstore.store",
        "stowage.blobstore.doctor",
        "stowage.tool_search.session",
    ):
        assert name in found, name
    graph = {name: imports(name, path, set(found)) for name, path in found.items()}
    assert "stowage.blobstore.doctor" in graph["stowage.blobstore.store"]


def test_no_import_circles():
    found = modules()
    known = set(found)
    graph = {name: imports(name, path, known) for name, path in found.items()}
    circles = cycles(graph)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_tool_search_and_blobstore_are_leaves():
    """Neither imports the context engine, the glue or the CLI, nor each other."""
    found = modules()
    known = set(found)
    for leaf, others in (
        ("stowage.tool_search", ("stowage.blobstore",)),
        ("stowage.blobstore", ("stowage.tool_search",)),
    ):
        for name, path in found.items():
            if name != leaf and not name.startswith(leaf + "."):
                continue
            for target in imports(name, path, known):
                assert target.startswith(leaf), f"{name} imports {target}"
                assert not target.startswith(others)


def test_the_session_never_reaches_back_into_the_engine():
    """The engine adapts the host's calls onto its session; no module of the context engine takes the engine back.

    The session's behaviour (compaction, preparation ahead, request shaping,
    status) gets a ``Limits`` snapshot instead, so only the host glue imports
    ``engine.py``.
    """
    found = modules()
    known = set(found)
    engine = "stowage.context_engine.host_adapter.engine"
    for name, path in found.items():
        if name.startswith("stowage.context_engine.") and name != engine:
            assert engine not in imports(name, path, known), f"{name} imports the engine"
    session = "stowage.context_engine.session.state"
    assert session in imports(engine, found[engine], known)


def test_a_circle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
