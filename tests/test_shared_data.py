"""tauguard.testing.shared_data: a test that reads the real files skips without them, and fails under CI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
from tauguard.testing.shared_data import shared_trajectories
def test_reads_real_files():
    assert shared_trajectories().is_dir()
"""


def _run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_probe.py").write_text(PROBE)
    base = {k: v for k, v in __import__("os").environ.items() if k != "CI"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path / "test_probe.py")],
                          capture_output=True, text=True, cwd=tmp_path, env={**base, **env}, timeout=120)


def test_without_the_files_a_test_is_skipped_with_the_reason(tmp_path: Path) -> None:
    done = _run(tmp_path, TAUGUARD_TRAJECTORIES=str(tmp_path / "absent"))
    assert done.returncode == 0 and "1 skipped" in done.stdout and "is not beside the checkout" in done.stdout, done.stdout


def test_under_ci_a_missing_folder_fails_the_test(tmp_path: Path) -> None:
    done = _run(tmp_path, TAUGUARD_TRAJECTORIES=str(tmp_path / "absent"), CI="true")
    assert done.returncode == 1 and "required in CI" in done.stdout, done.stdout


def test_a_folder_that_is_there_is_used(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    done = _run(tmp_path, TAUGUARD_TRAJECTORIES=str(tmp_path / "real"), CI="true")
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout
