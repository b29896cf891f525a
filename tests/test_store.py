import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tauguard.runs.records import Manifest, TrialRecord, is_success
from tauguard.usage_ledger import RoleUsage
from tauguard.runs.store import RecordWriter, RunLoadError, completed_keys, load_run, load_run_frame, write_manifest


def _manifest(run_id="r") -> Manifest:
    return Manifest(
        run_id=run_id, created_at="t", updated_at="t", simulated=True, strategy="react", domains=["airline"],
        split="base", task_ids={"airline": ["1", "2"]}, trials=2, agent_llm="sim", user_llm="sim", seed=1, max_steps=10,
    )


def _rec(task, trial, reward=1.0, error=None) -> TrialRecord:
    return TrialRecord(
        run_id="r", domain="airline", task_id=task, trial=trial, seed=1, strategy="react", simulated=True,
        policy_violation_task=False, reward=None if error else reward, success=None if error else is_success(reward),
        error=error,
    )


def test_success_tolerance_matches_tau2():
    assert is_success(1.0) and is_success(1 - 1e-7)
    assert not is_success(0.999) and not is_success(None)


def test_truncated_last_line_is_tolerated_and_repaired(tmp_path: Path):
    write_manifest(tmp_path, _manifest())
    w = RecordWriter(tmp_path)
    w.write(_rec("1", 0))
    w.write(_rec("1", 1, reward=0.0))
    w.close()
    with open(tmp_path / "simulations.jsonl", "a") as fh:
        fh.write(_rec("2", 0).model_dump_json()[:40])  # a kill mid-write
    run = load_run(tmp_path)
    assert [r.key for r in run.records] == [("airline", "1", 0), ("airline", "1", 1)]
    assert run.skipped_lines == 1
    # the next writer cuts the partial line so the new record starts on its own line
    w = RecordWriter(tmp_path)
    w.write(_rec("2", 0))
    w.close()
    lines = (tmp_path / "simulations.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)


def test_latest_record_wins_and_errors_are_not_completed(tmp_path: Path):
    write_manifest(tmp_path, _manifest())
    w = RecordWriter(tmp_path)
    w.write(_rec("1", 0, error="ConnectionError: boom"))
    w.write(_rec("2", 0))
    w.close()
    assert completed_keys(tmp_path) == {("airline", "2", 0)}
    w = RecordWriter(tmp_path)
    w.write(_rec("1", 0, reward=1.0))  # the resumed re-run
    w.close()
    run = load_run(tmp_path)
    assert len(run.records) == 2
    assert all(r.error is None for r in run.records)


def test_frame_has_one_row_per_trial(tmp_path: Path):
    write_manifest(tmp_path, _manifest())
    w = RecordWriter(tmp_path)
    for t in ("1", "2"):
        for k in (0, 1):
            rec = _rec(t, k, reward=float(k))
            rec.usage["attacker"] = RoleUsage(cost=0.25, prompt_tokens=70, completion_tokens=8, calls=1)
            w.write(rec)
    w.close()
    df = load_run_frame(tmp_path)
    assert len(df) == 4
    assert df["success"].sum() == 2
    assert {"agent_cost", "guard_prompt_tokens", "n_block"} <= set(df.columns)
    assert df["attacker_cost"].sum() == 1.0 and df["attacker_prompt_tokens"].sum() == 280  # every usage role


def test_missing_and_corrupt_runs_raise_one_line_errors(tmp_path: Path):
    with pytest.raises(RunLoadError, match="not found"):
        load_run(tmp_path / "nope")
    with pytest.raises(RunLoadError, match="no manifest.json"):
        load_run(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(RunLoadError, match="corrupt manifest") as err:
        load_run(tmp_path)
    assert "\n" not in str(err.value)


def test_one_writer_per_run_folder(tmp_path: Path):
    from tauguard.runs.store import RunFolderError, RunLock, lock_holder

    assert lock_holder(tmp_path) is None  # no lock file yet
    lock = RunLock.acquire(tmp_path)
    assert lock_holder(tmp_path) == os.getpid()
    with pytest.raises(RunFolderError, match=f"being written by process {os.getpid()}") as err:
        RunLock.acquire(tmp_path)
    assert "\n" not in str(err.value)
    lock.release()
    assert lock_holder(tmp_path) is None
    RunLock.acquire(tmp_path).release()


def test_a_killed_writer_releases_its_lock(tmp_path: Path):
    from tauguard.runs.store import RunLock, lock_holder

    code = f"from tauguard.runs.store import RunLock; RunLock.acquire({str(tmp_path)!r}); print('locked', flush=True); import time; time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    assert lock_holder(tmp_path) == proc.pid
    proc.kill()
    proc.wait()
    assert lock_holder(tmp_path) is None
    RunLock.acquire(tmp_path).release()


def test_run_folders_are_created_atomically(tmp_path: Path):
    from tauguard.runs.store import RunFolderError, create_run_dir, lock_holder

    stale = tmp_path / ".r.creating-999999999"  # left by a creator killed before its rename
    stale.mkdir()
    lock = create_run_dir(tmp_path, "r", _manifest())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]
    assert load_run(tmp_path / "r").live_pid == os.getpid() == lock_holder(tmp_path / "r")
    lock.release()
    with pytest.raises(RunFolderError, match="already exists"):
        create_run_dir(tmp_path, "r", _manifest())
    with pytest.raises(RunFolderError, match="cannot create run directory"):
        create_run_dir(tmp_path / "r" / "manifest.json", "x", _manifest())


def test_show_says_when_a_run_stopped_without_a_writer(tmp_path: Path):
    from typer.testing import CliRunner

    from tauguard.cli.main import app

    m = _manifest()
    m.status = "running"
    write_manifest(tmp_path, m)
    result = CliRunner().invoke(app, ["show", str(tmp_path)])
    assert result.exit_code == 0
    assert f"stopped before finishing (no process is writing it); finish it with: tauguard run --resume {tmp_path}" in result.output


def test_unreadable_records_are_a_one_line_error(tmp_path: Path):
    write_manifest(tmp_path, _manifest())
    (tmp_path / "simulations.jsonl").mkdir()
    with pytest.raises(RunLoadError, match="cannot read") as err:
        load_run(tmp_path)
    assert "\n" not in str(err.value)
