"""A run killed with SIGKILL part-way resumes with no lost and no duplicated unit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cli_helpers import REPO, tauguard


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_kill_9_then_resume_completes_without_duplicates(tmp_path: Path):
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", CI="true")
    args = [sys.executable, "-m", "tauguard", "run", "--domain", "retail", "--num-tasks", "12", "-k", "2",
            "--workers", "1", "--out", str(tmp_path), "--name", "killed"]
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    records = tmp_path / "killed" / "simulations.jsonl"
    deadline = time.time() + 240
    while time.time() < deadline and len(_lines(records)) < 5:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the runner and any worker it started
    proc.wait()
    done_before = len(_lines(records))
    assert 5 <= done_before < 24, "the run should have been killed part-way"
    # simulate a kill in the middle of a write as well
    with open(records, "a") as fh:
        fh.write('{"schema_version": 1, "run_id": "killed", "domain": "ret')
    resumed = tauguard("run", "--resume", str(tmp_path / "killed"))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    rows = [json.loads(line) for line in _lines(records)]
    keys = [(r["domain"], r["task_id"], r["trial"]) for r in rows]
    assert len(keys) == len(set(keys)) == 24
    manifest = json.loads((tmp_path / "killed" / "manifest.json").read_text())
    assert manifest["status"] == "completed"


def test_resume_rejects_changed_config(tmp_path: Path):
    first = tauguard("run", "--domain", "telecom", "--num-tasks", "2", "--out", str(tmp_path), "--name", "r1", "--workers", "1")
    assert first.returncode == 0, first.stderr[-1000:]
    again = tauguard("run", "--resume", str(tmp_path / "r1"), "--strategy", "refuse-writes")
    assert again.returncode == 2 and "--strategy" in again.stderr
    same = tauguard("run", "--resume", str(tmp_path / "r1"))
    assert same.returncode == 0
    assert len(_lines(tmp_path / "r1" / "simulations.jsonl")) == 2  # nothing re-run
