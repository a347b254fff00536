"""Process bootstrap for harness subprocesses (on ``PYTHONPATH``).

Python imports ``sitecustomize`` after the ``.pth`` files of site-packages
ran, so this runs before any host code in the driver *and* in the real
``hermes`` CLI.  Controlled by environment variables:

``STOWAGE_HARNESS_OFFLINE=1``
    Refuse every network connection that is not to a loopback address or a
    Unix socket, and refuse DNS lookups of non-local names, failing fast
    instead of hanging.  Each refused attempt is appended as a JSON line to
    ``STOWAGE_HARNESS_NET_LOG`` (if set) so tests can assert "no network".

``STOWAGE_HARNESS_CLI_PROBE=/path/probe.json``
    At interpreter exit, write what the ``hermes`` CLI ran with: the active
    agent's session id and context engine (class, module, name,
    ``compression_count``) and the loaded plugins with their source.

``STOWAGE_HARNESS_HIDE_DISTS=dist-a,dist-b``
    Make those installed distributions invisible to ``importlib.metadata``
    (so their ``hermes_agent.plugins`` entry points are not discovered), drop
    their setuptools *editable* import finders and refuse imports of their
    top-level packages (``ModuleNotFoundError``, also from ``find_spec``).  Used to test a user-folder install of a
    plugin whose distribution is also pip-installed in the same venv.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _log_attempt(kind: str, target: object) -> None:
    path = os.environ.get("STOWAGE_HARNESS_NET_LOG")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"kind": kind, "target": repr(target), "pid": os.getpid(), "time": time.time()}) + "\n")
    except OSError:
        pass


def _install_offline_guard() -> None:
    import ipaddress
    import socket

    local_names = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", ""}

    def is_local_host(host: object) -> bool:
        if host is None:
            return True
        if isinstance(host, bytes):
            host = host.decode("ascii", "ignore")
        host = str(host).strip("[]").lower()
        if host in local_names:
            return True
        try:
            addr = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return False
        return addr.is_loopback or addr.is_unspecified

    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not is_local_host(host):
            _log_attempt("dns", host)
            raise socket.gaierror(socket.EAI_NONAME, f"harness offline: DNS lookup of {host!r} refused")
        return real_getaddrinfo(host, *args, **kwargs)

    def allowed(sock: socket.socket, address: object) -> bool:
        if sock.family == getattr(socket, "AF_UNIX", object()):
            return True
        host = address[0] if isinstance(address, tuple) and address else address
        return is_local_host(host)

    def connect(self, address):  # type: ignore[no-untyped-def]
        if not allowed(self, address):
            _log_attempt("connect", address)
            raise ConnectionRefusedError(111, f"harness offline: connection to {address!r} refused")
        return real_connect(self, address)

    def connect_ex(self, address):  # type: ignore[no-untyped-def]
        if not allowed(self, address):
            _log_attempt("connect", address)
            return 111
        return real_connect_ex(self, address)

    socket.getaddrinfo = getaddrinfo
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]


def _top_level_names(dist) -> set[str]:  # noqa: ANN001 - importlib Distribution
    """Top-level import names a distribution provides (regular or editable)."""
    names: set[str] = set()
    text = dist.read_text("top_level.txt")
    if text:
        names.update(line.strip() for line in text.splitlines() if line.strip())
    for path in dist.files or []:
        first = path.parts[0] if path.parts else ""
        if first.startswith("__editable__") or first in ("..", "__pycache__") or first.endswith((".dist-info", ".pth")):
            continue
        names.add(first[:-3] if first.endswith(".py") else first)
    return names


class _BlockImports:
    """Meta-path finder refusing imports of the hidden distributions' packages."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001, ANN201
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden by the test harness)", name=fullname)
        return None


def _hide_distributions(names: set[str]) -> None:
    import importlib.metadata as md

    real_distributions = md.distributions
    blocked: set[str] = set()
    for dist in real_distributions():
        try:
            if _normalize(dist.metadata["Name"] or "") in names:
                blocked |= _top_level_names(dist)
        except Exception:
            continue

    def distributions(**kwargs):  # type: ignore[no-untyped-def]
        for dist in real_distributions(**kwargs):
            try:
                name = dist.metadata["Name"] or ""
            except Exception:
                name = ""
            if _normalize(name) not in names:
                yield dist

    md.distributions = distributions  # entry_points() looks this global up

    prefixes = tuple("__editable___" + n.replace("-", "_") + "_" for n in names)
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith(prefixes)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not getattr(h, "__module__", "").startswith(prefixes)]
    sys.path[:] = [p for p in sys.path if not str(p).startswith("__editable__.")]
    sys.path_importer_cache.clear()
    # Also covers regular (non-editable) installs of the hidden packages.
    if blocked:
        sys.meta_path.insert(0, _BlockImports(blocked))


def _write_cli_probe(path: str) -> None:
    """atexit: identity of the CLI's active agent/engine and plugin state."""
    data: dict = {"agent": False}
    try:
        agent = getattr(sys.modules.get("cli"), "_active_agent_ref", None)
        if agent is not None:
            engine = getattr(agent, "context_compressor", None)
            cls = type(engine)
            data = {
                "agent": True,
                "session_id": getattr(agent, "session_id", None),
                "engine": {
                    "class": cls.__name__,
                    "module": cls.__module__,
                    "name": getattr(engine, "name", None),
                    "is_builtin": cls.__module__ == "agent.context_compressor",
                    "compression_count": getattr(engine, "compression_count", None),
                },
            }
        plugins = sys.modules.get("hermes_cli.plugins")
        if plugins is not None:
            data["plugins"] = [
                {k: p.get(k) for k in ("key", "source", "enabled", "error", "tools", "hooks")}
                for p in plugins.get_plugin_manager().list_plugins()
                if p.get("source") != "bundled"
            ]
    except Exception as exc:  # noqa: BLE001 - never break the CLI's exit
        data["error"] = repr(exc)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, default=repr)
    except OSError:
        pass


if os.environ.get("STOWAGE_HARNESS_CLI_PROBE"):
    import atexit

    # Registered first, so it runs last: after the CLI's own exit cleanup.
    atexit.register(_write_cli_probe, os.environ["STOWAGE_HARNESS_CLI_PROBE"])

if os.environ.get("STOWAGE_HARNESS_OFFLINE") == "1":
    _install_offline_guard()

_hidden = {_normalize(n) for n in os.environ.get("STOWAGE_HARNESS_HIDE_DISTS", "").split(",") if n.strip()}
if _hidden:
    _hide_distributions(_hidden)
