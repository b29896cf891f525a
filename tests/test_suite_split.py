"""The suite's fast/slow split (issue 27): the default run is the fast tests, and CI runs both sets."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ci_commands() -> list[list[str]]:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [shlex.split(line) for line in lines if "-m pytest" in line and not line.lstrip().startswith("#")]


def test_the_default_run_deselects_the_slow_tests() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    addopts = options["addopts"]
    assert addopts[addopts.index("-m") + 1] == "not slow"
    assert any(m.startswith("slow:") for m in options["markers"])


def test_ci_runs_the_fast_set_and_the_slow_set_with_the_readme_sequence() -> None:
    commands = _ci_commands()
    assert ["python", "-m", "pytest"] in commands  # the default: the fast set
    assert ["TAUGUARD_README=1", "python", "-m", "pytest", "-m", "slow"] in commands


def test_the_readme_test_commands_name_both_sets() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Tests\n\n```bash\n(.*?)```", text, re.S)
    assert block is not None
    assert block.group(1).splitlines() == ["python -m pytest", "python -m pytest -m slow"]
