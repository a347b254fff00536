"""Why the plugin failed to import, and the exact fix, in one line.

Used at the two places a broken install shows: ``register(ctx)`` (the root
``__init__.py``) prints the line in the user's terminal when the plugin's own
import fails, and ``stowage doctor`` reads Hermes's ``Failed to load plugin
'stowage': <cause>`` log line and gives the same fix.  Standard library only:
it must work in the very install whose requirements are missing.
"""

from __future__ import annotations

import re
import shlex

# Import name -> requirement, as in pyproject.toml [project] dependencies (tests/cli/test_identity.py keeps
# them equal).  Hermes's own Python lacks most of them on the git-clone and user-plugin routes.
REQUIREMENTS: dict[str, str] = {
    "tiktoken": "tiktoken>=0.7",
    "bpe_openai": "bpe-openai>=0.1.4",
    "yaml": "pyyaml>=6.0",
    "regex": "regex>=2024.4.16",
    "snowballstemmer": "snowballstemmer>=2.2",
}
# What each requirement costs when it is missing (doctor and the register-time notice say it): None means the
# plugin does not load at all (tests/cli/test_requirements.py imports the plugin without each one to hold this).
# The factors are o200k_base's count against characters/4, measured on real tool outputs and dense samples.
ESTIMATE_COST = (
    "token counts fall back to characters/4: close on English code and logs (0.8 to 1.06x the real count), but "
    "2.3 to 2.7x under on hashes, UUIDs and base64, 3x on Chinese, 4x on emoji and 7x on Amharic, and the trigger "
    "and every budget let a request grow by that factor"
)
COST_WITHOUT: dict[str, str | None] = {
    "tiktoken": ESTIMATE_COST,
    "bpe_openai": "the tokenizer loads offline only if tiktoken's cache already holds its file; else " + ESTIMATE_COST,
    "yaml": None,
    "regex": None,
    "snowballstemmer": "tool search stems words with a few suffix rules instead of Snowball, so more searches miss",
}
_MISSING = re.compile(r"No module named '(?P<name>[^']+)'")
PACKAGE_MODULES = ("stowage", "hermes_plugins.stowage")


def pip_command(python: str) -> str:
    """The one command that installs every requirement into *python* (Hermes's interpreter)."""
    return f"{shlex.quote(python)} -m pip install " + " ".join(shlex.quote(r) for r in REQUIREMENTS.values())


def fix_for(cause: str, python: str, reinstall: str) -> str:
    """The fix for a load failure whose message is *cause* (``str(exception)`` or the log line's tail)."""
    match = _MISSING.search(cause)
    if match:
        top = match.group("name").split(".")[0]
        if top in REQUIREMENTS:
            return f"install Stowage's requirements into Hermes's Python: {pip_command(python)}"
        if match.group("name").startswith(PACKAGE_MODULES):
            return f"the install is missing one of its own modules; reinstall it: {reinstall}"
        return (
            f"install the missing module {top!r} into Hermes's Python ({python} -m pip install ...), or reinstall: "
            f"{reinstall}"
        )
    if "SyntaxError" in cause or "invalid syntax" in cause or "IndentationError" in cause:
        return f"a file of the install does not parse (changed or damaged); reinstall it: {reinstall}"
    return f"reinstall Stowage: {reinstall}"


def describe(exc: BaseException) -> str:
    """An exception as Hermes logs it (``No module named 'x'``), with the type where the message alone is vague."""
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, ModuleNotFoundError) else f"{type(exc).__name__}: {text}"


def terminal_line(exc: BaseException, python: str, reinstall: str) -> str:
    """The one line ``register(ctx)`` prints when the plugin's import fails."""
    cause = describe(exc)
    return (
        f"stowage: the Stowage plugin failed to load ({cause}); Hermes runs its built-in compressor this session. "
        f"Fix: {fix_for(cause, python, reinstall)}"
    )
