"""The host contract as a checked seam, against whichever Hermes is installed.

``python3 run.py hosts`` runs this in every host venv of the matrix (0.13.0 to
0.22.2); the full suite runs it on 0.19.0.  It reads the installed host's
``ContextEngine`` (methods and parameters) and the host's own call sites of
engine methods (by parsing its source), and fails when Stowage's override
cannot accept what the host passes: the next drift (like ``feasibility_skip``
on 0.20, which discarded compactions and crashed turns) fails here, not in a
user's session.
"""

from __future__ import annotations

import ast
import inspect
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import pytest

ce = pytest.importorskip("agent.context_engine")
from stowage.host.hermes_engine import StowageContextEngine  # noqa: E402

HOST_ABC = ce.ContextEngine
# called by hosts though not (or not on every host) declared on the ABC
PROBED = (
    "record_completed_compaction",
    "bind_session_state",
    "carry_over_new_session_context",
    "get_active_compression_failure_cooldown",
    "clone_for_agent",
    "select_context",
    "on_turn_complete",
    "should_compress_info",
    "get_automatic_compaction_status_message",
    "prune_tool_results_only",
)
# receivers that are the context engine in the host's code
ENGINE_RECEIVERS = ("context_compressor", "compressor", "context_engine", "engine")


def _host_methods() -> list[str]:
    names = {n for n, f in inspect.getmembers(HOST_ABC, inspect.isfunction) if not n.startswith("__")}
    return sorted(names | {n for n in PROBED if callable(getattr(StowageContextEngine, n, None))})


def _stowage_defines(name: str) -> bool:
    """Stowage's own override (not the host ABC's default)."""
    for klass in StowageContextEngine.__mro__:
        if klass is HOST_ABC or klass is object:
            return False
        if name in vars(klass):
            return True
    return False


def _dummy(parameter: inspect.Parameter) -> Any:
    return None if parameter.default is inspect.Parameter.empty else parameter.default


@pytest.mark.parametrize("name", _host_methods())
def test_stowage_accepts_every_parameter_of_the_hosts_declaration(name: str) -> None:
    if not _stowage_defines(name):
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


@lru_cache(maxsize=1)
def _host_call_sites() -> list[tuple[str, int, str, int, tuple[str, ...]]]:
    """(file, line, method, positional count, keyword names) of the host's engine method calls."""
    import run_agent

    root = Path(run_agent.__file__).resolve().parent
    files = [root / "run_agent.py", root / "cli.py", root / "model_tools.py"]
    for package in ("agent", "gateway", "hermes_cli", "tools"):
        files += sorted((root / package).rglob("*.py")) if (root / package).is_dir() else []
    methods = set(_host_methods())
    sites = []
    for path in files:
        if not path.is_file():
            continue
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
