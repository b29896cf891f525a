"""The type gate's settings (issue 27): mypy strict for all of tauguard and the strategies,
relaxed only for third-party libraries."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _mypy() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_mypy_is_strict_and_never_relaxed_for_our_own_modules() -> None:
    config = _mypy()
    assert config["strict"] is True
    for override in config.get("overrides", []):
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        assert not any(m.split(".")[0] in ("tauguard", "tauguard_strategies") for m in modules), override
        assert set(override) <= {"module", "ignore_missing_imports"}, override  # stubs only, no ignore_errors
