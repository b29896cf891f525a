"""One writer per run folder, no unrecoverable kill point, SIGTERM as Ctrl-C, workers that die
with their parent, joblib's /dev/shm folders cleaned (issue 11).

One process tree is driven through the whole story so the test pays for tau2's import a few
times only: kill -9 in the start-up window, rerun, a concurrent --resume (refused, naming the
writer's PID) and `show` on the live run, SIGTERM, SIGKILL of the main process only, and a
final resume that leaves every (task, trial) exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_helpers import REPO
from tauguard.cli.main import app
from tauguard.runs.store import lock_holder

ENV = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", CI="true")
# Enough units that the run is still going when the test interferes: a sim simulation now
# costs milliseconds, so a handful of units would finish before the concurrent resume.
UNITS = 456  # the 114 retail base tasks x 4 trials


def _start(out: Path, *extra: str) -> subprocess.Popen:
    args = [sys.executable, "-m", "tauguard", "run", "--domain", "retail", "-k", "4",
            "--workers", "2", "--out", str(out), "--name", "r", *extra]
    return subprocess.Popen(args, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _resume(run_dir: Path) -> subprocess.Popen:
    args = [sys.executable, "-m", "tauguard", "run", "--resume", str(run_dir), "--workers", "2"]
    return subprocess.Popen(args, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _records(run_dir: Path) -> list[dict]:
    path = run_dir / "simulations.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return out


def _wait(cond, timeout: float = 240.0) -> None:
    deadline = time.time() + timeout
    while not cond():
        assert time.time() < deadline, "timed out"
        time.sleep(0.02)


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _shm_of(pid: int) -> list[Path]:
    return list(Path("/dev/shm").glob(f"joblib_memmapping_folder_{pid}_*"))


@pytest.mark.slow
def test_kills_locks_and_signals_leave_a_resumable_run(tmp_path: Path):
    run_dir = tmp_path / "r"
    runner = CliRunner()

    # 1. kill -9 of the process group in the start-up window: as soon as the run's folder is
    #    being built. Either no run folder exists (the same command works again) or it has a
    #    manifest (--resume works); never a folder that neither accepts.
    first = _start(tmp_path)
    _wait(lambda: any(tmp_path.iterdir()), timeout=120)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert not run_dir.exists() or (run_dir / "manifest.json").is_file()

    # 2. start again (rerun or resume), then a concurrent --resume and `show` on the live run
    second = _start(tmp_path) if not run_dir.exists() else _resume(run_dir)
    _wait(lambda: len(_records(run_dir)) >= 2)
    assert lock_holder(run_dir) == second.pid
    clash = runner.invoke(app, ["run", "--resume", str(run_dir)])
    assert clash.exit_code == 2
    err_lines = clash.output.strip().splitlines()
    assert len(err_lines) == 1 and err_lines[0].startswith("error:") and f"process {second.pid}" in err_lines[0]
    shown = runner.invoke(app, ["show", str(run_dir), "--format", "json"])
    assert shown.exit_code == 0 and f"is live (being written by PID {second.pid})" in shown.output

    # 3. SIGTERM behaves like Ctrl-C: status interrupted, a resume hint, joblib's shm cleaned
    workers = _children(second.pid)
    os.kill(second.pid, signal.SIGTERM)
    _, stderr = second.communicate(timeout=120)
    assert second.returncode == 3, stderr[-1500:]
    assert "error: run incomplete: interrupted by SIGTERM at " in stderr
    assert f"resume with: tauguard run --resume {run_dir}" in stderr
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "interrupted"
    assert _shm_of(second.pid) == []
    _wait(lambda: not any(_alive(w) for w in workers), timeout=30)
    assert lock_holder(run_dir) is None

    # 4. SIGKILL of the main process only: its loky workers notice and exit within seconds
    third = _resume(run_dir)
    done = len(_records(run_dir))
    _wait(lambda: len(_records(run_dir)) > done and _children(third.pid))
    workers = [w for w in _children(third.pid) if _alive(w)]
    os.kill(third.pid, signal.SIGKILL)
    third.wait()
    _wait(lambda: not any(_alive(w) for w in workers), timeout=15)

    # 5. the final resume completes the run: every (task, trial) exactly once
    last = _resume(run_dir)
    _, stderr = last.communicate(timeout=600)
    assert last.returncode == 0, stderr[-1500:]
    keys = [(r["domain"], r["task_id"], r["trial"]) for r in _records(run_dir)]
    assert len(keys) == len(set(keys)) == UNITS
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "completed"
    assert [p.name for p in tmp_path.iterdir()] == ["r"]  # no half-built folder left behind
