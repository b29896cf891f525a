"""Where the tests find ``../shared/trajectories`` (the real τ² results files), and what they do without it.

``$TAUGUARD_TRAJECTORIES`` names the folder (as for ``tauguard dialogue eval``); otherwise the nearest
``shared/trajectories`` above this file. CI lays ``shared/`` beside the checkout, and a test that reads real conversations must run there:
under ``CI=true`` a missing folder fails the test. Anywhere else (a clone on its own, a wheel
install) such a test is skipped with the reason, never errored.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

MISSING = "../shared/trajectories (the real τ² results files) is not beside the checkout"


def _find() -> Path | None:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "trajectories"
        if candidate.is_dir():
            return candidate
    return None


def shared_trajectories() -> Path:
    """The folder of real results files; skips the calling test without it (fails it under CI)."""
    found = os.environ.get("TAUGUARD_TRAJECTORIES")
    path = Path(found) if found else _find()
    if path is None or not path.is_dir():
        need(False, MISSING)
    assert path is not None
    return path


def has_shared_trajectories() -> bool:
    """Whether the folder is there (for a ``skipif`` that must not fail at collection)."""
    found = os.environ.get("TAUGUARD_TRAJECTORIES")
    return Path(found).is_dir() if found else _find() is not None


def need(condition: bool, why: str) -> None:
    """Skip the calling test when ``condition`` is false, with ``why``; under ``CI=true`` fail it instead."""
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"required in CI: {why}")
    pytest.skip(why)
