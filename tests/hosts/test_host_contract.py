"""The host contract as a checked seam, against whichever Hermes is installed.

``python3 run.py hosts`` runs this in every host venv of the matrix (0.13.0 to
0.22.2); the full suite runs it on 0.19.0.  The contract is the one the code
declares, ``context_engine/host_adapter/host_contract.py`` (``MEMBERS`` and the ``HostEngine``
protocol): this file keeps no list of its own.  It fails when the engine lacks
a member of the contract or its signature drifts from the contract's, when the
installed host's ``ContextEngine`` declares a contract method with parameters
the contract does not name, when the host has no trace of a method the
contract dates to its version or earlier, and when Stowage's override cannot
accept what the host passes at its own call sites (found by parsing its
source): the next drift (like ``feasibility_skip`` on 0.20, which discarded
compactions and crashed turns) fails here, not in a user's session.
"""

from __future__ import annotations

import ast
import inspect
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import pytest

ce = pytest.importorskip("agent.context_engine")
from stowage.context_engine.host_adapter import host_contract  # noqa: E402
from stowage.host.hermes_engine import StowageContextEngine  # noqa: E402
from stowage.host.host_support import installed_version, parse  # noqa: E402

HOST_ABC = ce.ContextEngine
MEMBERS, LEFT_TO_THE_HOST, HostEngine = host_contract.MEMBERS, host_contract.LEFT_TO_THE_HOST, host_contract.HostEngine
HostMember = host_contract.HostMember
CONTRACT_METHODS = tuple(host_contract.member_names("method"))
# receivers that are the context engine in the host's code
ENGINE_RECEIVERS = ("context_compressor", "compressor", "context_engine", "engine")


def _host_methods() -> list[str]:
    """The methods the installed host's ABC declares and those the contract says hosts call."""
    names = {n for n, f in inspect.getmembers(HOST_ABC, inspect.isfunction) if not n.startswith("__")}
    return sorted(names | set(CONTRACT_METHODS))


def _stowage_defines(name: str) -> bool:
    """Stowage's own override (not the host ABC's default)."""
    for klass in StowageContextEngine.__mro__:
        if klass is HOST_ABC or klass is object:
            return False
        if name in vars(klass):
            return True
    return False


@pytest.mark.parametrize("member", MEMBERS, ids=lambda member: member.name)
def test_the_engine_has_every_member_of_the_contract(member: HostMember) -> None:
    """Stowage's own, not a default the host's ABC would quietly supply in its place."""
    engine = _engine()
    said = f"the contract's {member.kind} {member.name} (hosts since {member.since}: {member.use})"
    if member.kind == "attribute":
        assert _stowage_defines(member.name) or member.name in vars(engine), f"StowageContextEngine lacks {said}"
        assert not callable(getattr(engine, member.name)), f"{said} is callable on StowageContextEngine"
        return
    assert _stowage_defines(member.name), f"StowageContextEngine does not define {said}"
    if member.kind == "property":
        assert isinstance(inspect.getattr_static(StowageContextEngine, member.name), property), said
        getattr(engine, member.name)
    else:
        assert callable(getattr(engine, member.name)), said


def _drift(ours: inspect.Signature, declared: inspect.Signature, *, open_ended: bool = True) -> list[str]:
    """Why a call written against ``declared`` could fail on ``ours`` (empty: it cannot).

    The parameters ``declared`` takes by position are ours, by the same names in
    the same order; one it may omit we may not require; a keyword it names we
    name too; nothing we require is missing from it.  ``open_ended``: ours also
    takes keywords nobody declared (``**kwargs``), so a host passing one more
    keyword cannot break it.
    """
    problems = []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    mine = [p for p in ours.parameters.values() if p.kind in kinds][1:]  # without self
    theirs = [p for p in declared.parameters.values() if p.kind in kinds][1:]
    for index, parameter in enumerate(theirs):
        if index >= len(mine) or mine[index].name != parameter.name:
            got = mine[index].name if index < len(mine) else "nothing"
            problems.append(f"positional parameter {index + 1} is {parameter.name!r} there, {got!r} here")
        elif parameter.default is not inspect.Parameter.empty and mine[index].default is inspect.Parameter.empty:
            problems.append(f"{parameter.name!r} is optional there, required here")
    named = {p.name for p in declared.parameters.values()}
    for parameter in ours.parameters.values():
        if parameter.name in named or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is inspect.Parameter.empty and parameter.name != "self":
            problems.append(f"{parameter.name!r} is required here and not declared there")
    mine_named = {p.name for p in ours.parameters.values()}
    for parameter in declared.parameters.values():
        if parameter.kind is parameter.KEYWORD_ONLY and parameter.name not in mine_named:
            problems.append(f"keyword {parameter.name!r} is declared there, not named here")
    if open_ended and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ours.parameters.values()):
        problems.append("no **kwargs here: a host passing one more keyword breaks it")
    return problems


@pytest.mark.parametrize("name", CONTRACT_METHODS)
def test_stowage_takes_every_method_as_the_contract_declares_it(name: str) -> None:
    if not _stowage_defines(name):
        pytest.fail(f"StowageContextEngine does not define the contract's {name}()")
    ours, declared = (
        inspect.signature(getattr(StowageContextEngine, name)),
        inspect.signature(getattr(HostEngine, name)),
    )
    problems = _drift(ours, declared)
    assert not problems, f"StowageContextEngine.{name}{ours} against host_contract.HostEngine.{name}{declared}: " + (
        "; ".join(problems)
    )


@pytest.mark.parametrize("name", CONTRACT_METHODS)
def test_the_contract_names_every_parameter_the_hosts_declaration_has(name: str) -> None:
    declared = getattr(HOST_ABC, name, None)
    if declared is None or not inspect.isfunction(declared):
        pytest.skip(f"this host's ContextEngine does not declare {name}")
    contract, theirs = inspect.signature(getattr(HostEngine, name)), inspect.signature(declared)
    problems = _drift(contract, theirs, open_ended=False)
    assert not problems, f"host_contract.HostEngine.{name}{contract} against this host's {name}{theirs}: " + (
        "; ".join(problems)
    )


def test_the_contract_knows_every_member_the_hosts_abc_declares() -> None:
    """A method or attribute a new host adds to its ``ContextEngine`` fails here until the contract says what it is."""
    known = {m.name for m in (*MEMBERS, *LEFT_TO_THE_HOST)}
    declared = {n for n in vars(HOST_ABC) if not n.startswith("__") and n != "_abc_impl"}
    unknown = sorted(declared - known)
    assert not unknown, (
        f"this host's ContextEngine declares {unknown}: add each to host_contract.MEMBERS (and HostEngine) "
        "or LEFT_TO_THE_HOST"
    )


def _dated_to_this_host() -> list[HostMember]:
    running = parse(installed_version())
    return [m for m in MEMBERS if m.kind == "method" and running is not None and parse(m.since) <= running]


def test_the_host_calls_every_method_the_contract_dates_to_it_or_earlier() -> None:
    """``MEMBERS``' ``since`` column, held against the installed host: its ABC or its source names each method."""
    members = _dated_to_this_host()
    if not members:
        pytest.skip(f"the contract dates no method to Hermes {installed_version()} or earlier")
    called = {site[2] for site in _host_call_sites()}
    source = _host_source_text()
    missing = [
        m.name
        for m in members
        if m.name not in called
        and getattr(HOST_ABC, m.name, None) is None
        and not any(trace in source for trace in (f'"{m.name}"', f"'{m.name}'", f".{m.name}"))
    ]
    assert not missing, f"Hermes {installed_version()} has no trace of {missing}, which the contract dates to it"


def _dummy(parameter: inspect.Parameter) -> Any:
    return None if parameter.default is inspect.Parameter.empty else parameter.default


@pytest.mark.parametrize("name", _host_methods())
def test_stowage_accepts_every_parameter_of_the_hosts_declaration(name: str) -> None:
    if not _stowage_defines(name):
        if name in CONTRACT_METHODS:
            pytest.fail(f"StowageContextEngine does not define the contract's {name}(): the host's default runs")
        pytest.skip(f"Stowage inherits the host's {name}")
    ours = inspect.signature(getattr(StowageContextEngine, name))
    assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ours.parameters.values()), (
        f"StowageContextEngine.{name}{ours} takes no **kwargs: a host passing one more keyword breaks it"
    )
    declared = getattr(HOST_ABC, name, None)
    if declared is None:
        return
    theirs = inspect.signature(declared)
    args: list[Any] = []
    kwargs: dict[str, Any] = {"stowage_contract_probe": 1}  # an unknown keyword from a future host
    for parameter in theirs.parameters.values():
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            args.append(_dummy(parameter))
        elif parameter.kind is parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = _dummy(parameter)
    ours.bind(*args, **kwargs)  # positionally as declared
    keyword_form = {
        p.name: _dummy(p)
        for p in list(theirs.parameters.values())[1:]
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    ours.bind(None, **keyword_form, stowage_contract_probe=1)  # and by keyword, as hosts call most


def _host_files() -> list[Path]:
    import run_agent

    root = Path(run_agent.__file__).resolve().parent
    files = [root / "run_agent.py", root / "cli.py", root / "model_tools.py"]
    for package in ("agent", "gateway", "hermes_cli", "tools"):
        files += sorted((root / package).rglob("*.py")) if (root / package).is_dir() else []
    return [path for path in files if path.is_file()]


@lru_cache(maxsize=1)
def _host_source_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in _host_files())


@lru_cache(maxsize=1)
def _host_call_sites() -> list[tuple[str, int, str, int, tuple[str, ...]]]:
    """(file, line, method, positional count, keyword names) of the host's engine method calls."""
    import run_agent

    root = Path(run_agent.__file__).resolve().parent
    methods = set(_host_methods())
    sites = []
    for path in _host_files():
        try:
            text = path.read_text(encoding="utf-8")
            if not any(f"{method}(" in text for method in methods):
                continue  # parse only the files that call an engine method name
            tree = ast.parse(text)
        except (SyntaxError, UnicodeDecodeError):
            continue
        aliases = _aliases(tree, methods)  # record = getattr(type(engine), "method", None); record(engine, ...)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            positional = len(node.args)
            if isinstance(node.func, ast.Name) and node.func.id in aliases:
                method, unbound = aliases[node.func.id]
                positional -= 1 if unbound and node.args else 0
            elif isinstance(node.func, ast.Attribute) and node.func.attr in methods:
                method = node.func.attr
                receiver = ast.unparse(node.func.value)
                if receiver.startswith("type(") and node.args:
                    positional -= 1  # type(engine).method(engine, ...)
                elif not _is_engine(receiver):
                    continue
            else:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                continue
            sites.append(
                (
                    f"{path.relative_to(root)}",
                    node.lineno,
                    method,
                    positional,
                    tuple(k.arg for k in node.keywords if k.arg),
                )
            )
    return sites


def _is_engine(receiver: str) -> bool:
    return receiver.split(".")[-1].lstrip("_").endswith(ENGINE_RECEIVERS)


def _aliases(tree: ast.AST, methods: set[str]) -> dict[str, tuple[str, bool]]:
    """Local names bound to an engine method: ``getattr(engine|type(engine), "m", ...)`` or ``engine.m``."""
    found: dict[str, tuple[str, bool]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            continue
        value = node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "getattr"
            and len(value.args) >= 2
            and isinstance(value.args[1], ast.Constant)
            and value.args[1].value in methods
        ):
            owner = ast.unparse(value.args[0])
            if owner.startswith("type(") or _is_engine(owner):
                found[node.targets[0].id] = (str(value.args[1].value), owner.startswith("type("))
        elif isinstance(value, ast.Attribute) and value.attr in methods and _is_engine(ast.unparse(value.value)):
            found[node.targets[0].id] = (value.attr, False)
    return found


def test_every_host_call_site_binds_to_stowage() -> None:
    sites = _host_call_sites()
    called = {site[2] for site in sites}
    assert {"update_model", "should_compress"} <= called, f"the scan of the host's source is broken: found {called}"
    problems = []
    for file, line, method, positional, keywords in sites:
        if not _stowage_defines(method):
            continue
        signature = inspect.signature(getattr(StowageContextEngine, method))
        try:
            signature.bind(None, *([None] * positional), **{k: None for k in keywords})
        except TypeError as exc:
            problems.append(f"{file}:{line} {method}({positional} positional, {', '.join(keywords)}): {exc}")
    assert not problems, "\n".join(problems)


def _engine() -> StowageContextEngine:
    return StowageContextEngine()


def test_compress_is_offered_bypass_cooldown_by_the_hosts_own_filter() -> None:
    compression = pytest.importorskip("agent.conversation_compression")
    supported: Callable[..., dict[str, Any]] | None = getattr(compression, "_supported_compression_kwargs", None)
    if supported is None:
        pytest.skip("this host passes compress() arguments without filtering them")
    engine = _engine()
    parameters = inspect.signature(supported).parameters
    if "bypass_cooldown" not in parameters:
        pytest.skip("this host never passes bypass_cooldown")
    kwargs = supported(
        engine.compress, current_tokens=1, focus_topic=None, force=False, memory_context="", bypass_cooldown=True
    )
    assert kwargs.get("bypass_cooldown") is True, kwargs


def test_prune_tool_results_only_as_the_host_calls_it_commits_nothing() -> None:
    """0.20+ call it between compactions and drop their read dedup when it commits (a new list, n > 0)."""
    engine = _engine()
    prune = getattr(engine, "prune_tool_results_only", None)
    if prune is None:
        pytest.skip("this host has no prune_tool_results_only")
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x" * 5000}]
    pruned, count = prune(messages, current_tokens=50_000)
    assert count == 0 or pruned is not messages  # the host's commit rule: count > 0 only with a new list
    assert isinstance(pruned, list) and isinstance(count, int)


def test_model_thresholds_assigned_before_update_model_are_honoured() -> None:
    """The host sets ``engine.model_thresholds`` from compression.model_thresholds, then calls update_model."""
    engine = _engine()
    engine.model_thresholds = {"fake-model": 0.5, "custom:other": 0.9}
    engine.update_model(
        model="fake-model",
        context_length=200_000,
        base_url="http://127.0.0.1:9",
        api_key="k",
        provider="custom",
        api_mode="chat_completions",
    )
    assert engine.threshold_tokens == 100_000
    engine.model_thresholds = {"custom:other": 0.9}
    engine.update_model(model="other", context_length=200_000, provider="custom")
    assert engine.threshold_tokens == 180_000


def test_the_host_assigns_model_thresholds_by_that_name_where_it_has_them() -> None:
    sites = [site for site in _assignments("model_thresholds")]
    compressor = pytest.importorskip("agent.context_compressor")
    if "model_thresholds" not in inspect.getsource(compressor):
        pytest.skip("this host has no compression.model_thresholds")
    assert sites, "the host has model_thresholds but never assigns it to the engine: Stowage would not see it"


def _assignments(attribute: str) -> list[tuple[str, int]]:
    import run_agent

    root = Path(run_agent.__file__).resolve().parent
    found = []
    for path in [root / "run_agent.py", *sorted((root / "agent").rglob("*.py"))]:
        try:
            text = path.read_text(encoding="utf-8")
            if f".{attribute} =" not in text:
                continue
            tree = ast.parse(text)
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr == attribute
                        and ast.unparse(target.value).split(".")[-1].endswith(ENGINE_RECEIVERS)
                    ):
                        found.append((str(path), node.lineno))
    return found


def test_the_public_toolset_names_exactly_the_hosts_core_tools() -> None:
    """Tool search keeps the host's core tools undeferred, read through the public toolset table: the same names as
    the host's private list on every host of the matrix (the glue no longer imports that list)."""
    import toolsets

    from stowage.host import tool_search_glue

    private = getattr(toolsets, "_HERMES_CORE_TOOLS", None)
    if private is None:
        pytest.skip("this host has no private core list to compare with")
    assert tool_search_glue.core_tool_names() == frozenset(private)
