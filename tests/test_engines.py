"""`--backend ray` and `--backend dask` (issue 16): a small sim run on a local Ray and a local
Dask cluster (2 workers each) gives the same records as loky; a job lost with its worker
leaves its units pending for `--resume`; no cluster process outlives a run.

The engines are optional extras: without them these tests are skipped, except under
`CI=true`, where they fail (CI installs `.[dev,ray,dask]` and must exercise them).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import tauguard
from tauguard.execution.engines import JobOutput, missing_extra
from tauguard.execution.job import LOSE_JOB_ENV, Job
from tauguard.runs.store import load_run

# A small run that meets faults, guard verdicts, passes and failures: 3 airline tasks x 2
# trials of the ledger guard.
RUN = {"strategy": "ledger", "domains": ["airline"], "task_ids": ["7", "17", "27"], "trials": 2,
       "faults": "realistic", "seed": 300, "workers": 2}


def _require(backend: str) -> None:
    extra = missing_extra(backend)
    if extra is None:
        return
    why = f"--backend {backend} needs the {extra} extra: pip install 'tauguard[{extra}]'"
    if os.environ.get("CI") == "true":
        pytest.fail(why)  # CI must run the engines, never skip them
    pytest.skip(why)


def _comparable(record: Any) -> dict[str, Any]:
    """A record without what differs between two runs of the same units (ids, timings)."""
    data = record.model_dump(mode="json", exclude={"run_id", "duration_s", "simulation"})
    for event in data["guard_events"]:
        event.pop("latency_s")
    messages = record.simulation["messages"]
    data["conversation"] = [(m["role"], m.get("content"), m.get("tool_calls")) for m in messages]
    data["reward_info"] = record.simulation["reward_info"]
    return data


def _records(run_dir: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {r.key: _comparable(r) for r in load_run(run_dir).records}


def _cluster_processes(ignore: frozenset[str] = frozenset()) -> list[str]:
    """Ray processes anywhere, and Dask's spawned workers of this process: none may outlive a run.

    ``ignore``: pids already running before the run (another Ray cluster on a shared machine
    is not this run's leftover)."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or entry.name in ignore:
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        ray = any(mark in cmd for mark in ("ray::", "raylet", "gcs_server", "default_worker.py"))
        if ray or (ppid == me and "spawn_main" in cmd):
            found.append(f"{entry.name}: {cmd[:120]}")
    return found


def _pids(lines: list[str]) -> frozenset[str]:
    return frozenset(line.split(":", 1)[0] for line in lines)


def _no_cluster_left(before: frozenset[str] = frozenset()) -> None:
    deadline = time.time() + 15
    while _cluster_processes(before) and time.time() < deadline:
        time.sleep(0.2)
    assert _cluster_processes(before) == []


@pytest.fixture(scope="module")
def with_loky(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, int], dict[str, Any]]:
    out = tmp_path_factory.mktemp("loky")
    result = tauguard.run({**RUN, "backend": "loky", "out": str(out), "name": "loky"})
    assert result.status == "completed"
    records = _records(result.run_dir)
    assert len(records) == 6 and sum(len(r["faults"]) for r in records.values()) >= 3
    assert any(str(e["verdict"]).lower() == "block" for r in records.values() for e in r["guard_events"])
    assert {r["success"] for r in records.values()} == {True, False}
    return records


@pytest.mark.slow
def test_ray_local_cluster_gives_the_records_of_loky(with_loky, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _require("ray")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    before = _pids(_cluster_processes())
    result = tauguard.run({**RUN, "backend": "ray", "out": str(tmp_path), "name": "ray"})
    assert result.status == "completed"
    assert result.manifest.config["backend"] == "ray" and result.manifest.config["address"] is None
    assert _records(result.run_dir) == with_loky
    assert "ray" not in sys.modules or not __import__("ray").is_initialized()  # shut down after the run
    _no_cluster_left(before)


@pytest.mark.slow
def test_dask_lost_worker_leaves_its_units_for_resume(
    with_loky, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The job of airline/17 kills its worker process (a test hook, as a lost node would): the
    other units are recorded, the run ends `interrupted` with no traceback and exit 3 (before:
    exit 0 with only `warning:` lines), and `--resume` runs the two lost units; every record
    equals loky's."""
    _require("dask")
    from typer.testing import CliRunner

    from tauguard.cli.main import app

    monkeypatch.setenv(LOSE_JOB_ENV, "airline/17")
    before = _pids(_cluster_processes())
    run_dir = tmp_path / "dask"
    res = CliRunner().invoke(app, [
        "run", "--strategy", RUN["strategy"], "--task-ids", ",".join(RUN["task_ids"]), "-k", str(RUN["trials"]),
        "--faults", RUN["faults"], "--seed", str(RUN["seed"]), "--backend", "dask", "--workers", "2",
        "--out", str(tmp_path), "--name", "dask", "--plain",
    ])
    assert res.exit_code == 3, res.output
    assert "Traceback" not in res.output and "lost the job of airline/17 (2 units)" in res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: run incomplete: 2 units not recorded (lost with their worker); resume to run them; "
        f"resume with: tauguard run --resume {run_dir}"
    ]
    manifest = load_run(run_dir).manifest
    assert manifest.status == "interrupted" and "2 units not recorded" in (manifest.stop_reason or "")
    partial = _records(run_dir)
    assert sorted(partial) == sorted(k for k in with_loky if k[1] != "17")
    _no_cluster_left(before)
    monkeypatch.delenv(LOSE_JOB_ENV)
    resumed = tauguard.resume(run_dir, workers=1)  # in this process: the lost units only
    assert resumed.status == "completed" and resumed.progress.done == 6 and resumed.incomplete is None
    assert _records(run_dir) == with_loky


def test_a_missing_extra_is_one_error_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    from tauguard.cli.main import main

    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed: find_spec says None
    monkeypatch.setattr(sys, "argv", ["tauguard", "run", "--backend", "ray", "--out", str(tmp_path / "runs")])
    with pytest.raises(SystemExit) as exit_:
        main()
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2
    assert err == ["error: --backend ray needs the ray extra: pip install 'tauguard[ray]'"]
    assert list(tmp_path.iterdir()) == []


def test_the_plan_names_the_engine_and_resume_may_change_the_address(tmp_path: Path):
    _require("dask")
    local = tauguard.plan({**RUN, "backend": "dask", "out": str(tmp_path)})
    assert "engine:    dask, local cluster, 2 workers" in local.describe()
    remote = tauguard.plan({**RUN, "backend": "dask", "address": "tcp://head:8786", "out": str(tmp_path)})
    assert "engine:    dask, cluster at tcp://head:8786" in remote.describe()
    with pytest.raises(ValueError, match="must not contain credentials"):
        tauguard.plan({**RUN, "backend": "dask", "address": "tcp://me:secret@head:8786", "out": str(tmp_path)})
    assert list(tmp_path.iterdir()) == []


class _FakeEngine:
    """An in-process engine: jobs end in submission order, each unit's record first; the job of
    task "lost" dies."""

    def __init__(self) -> None:
        self.running: list[Job] = []
        self.submitted: list[int] = []
        self.peak = 0
        self.stopped = False
        self.closed: bool | None = None  # close(cancel) once closed

    def submit(self, job: Job) -> None:
        self.submitted.append(job.id)
        self.running.append(job)
        self.peak = max(self.peak, len(self.running))

    def results(self, timeout: float) -> list[JobOutput]:
        job = self.running.pop(0)
        if job.first.task_id == "lost":
            return [JobOutput(job.id, ended=True, lost="worker died")]
        return [JobOutput(job.id, [{"key": unit.key} for unit in job.units]), JobOutput(job.id, ended=True)]

    def stop_starting(self) -> None:
        self.stopped = True

    def close(self, cancel: bool) -> None:
        self.closed = cancel


def _units(tasks: list[str], trials: int) -> list[Any]:
    from conftest import make_unit

    return [make_unit("airline", t, trial=k) for k in range(trials) for t in tasks]


def test_driver_bounds_submission_skips_lost_jobs_and_honours_the_budget(capsys: pytest.CaptureFixture[str]):
    from tauguard.execution.driver import Dispatch, Records, dispatch, drive

    jobs = dispatch(_units(["0", "lost", "2", "3", "4"], 2), 2, "dask", None, threaded=False).jobs
    assert [len(j.units) for j in jobs] == [2] * 5  # a task's trials are one job
    engine = _FakeEngine()
    keys = [r["key"] for r in drive(engine, jobs, limit=2, may_start=None)]
    assert engine.peak == 2 and len(keys) == 8 and all(k[1] != "lost" for k in keys)
    assert "lost the job of airline/lost (2 units): worker died" in capsys.readouterr().err

    taken: list[Any] = []
    engine = _FakeEngine()
    singles = dispatch(_units(["0", "1", "2", "3"], 1), 2, "dask", None, threaded=True).jobs
    stream = drive(engine, singles, limit=2, may_start=lambda: len(taken) < 1)  # a budget reached after the first record
    taken += [next(stream)]
    assert list(stream) == [{"key": ("airline", "1", 0)}]  # in flight before the cap: finished, nothing new
    assert engine.submitted == [0, 1] and engine.stopped

    engine = _FakeEngine()
    records = Records(Dispatch("fake", lambda: engine, jobs, 3), None)
    next(records)
    records.close()  # Ctrl-C, SIGTERM: the engine stops what is in flight at once
    assert engine.closed is True
    engine = _FakeEngine()
    assert len(list(Records(Dispatch("fake", lambda: engine, jobs[:1], 3), None))) == 2
    assert engine.closed is False  # exhausted: closed, nothing to cancel


@pytest.mark.parametrize(
    ("workers", "backend", "concurrency", "threaded", "engine", "shape", "limit"),
    [
        # sim mode: units in turn inside a job (threads None)
        (1, "fork", None, False, "inline", [(2, None)] * 3, 1),
        (2, "fork", None, False, "fork", [(1, None)] * 6, 4),  # 3 tasks x 2 trials: split so no worker idles
        (2, "loky", None, False, "pool", [(2, None)] * 3, 4),
        (2, "multiprocessing", None, False, "pool", [(2, None)] * 3, 4),
        (2, "threading", None, False, "inline", [(6, 2)], 1),
        (2, "sequential", None, False, "inline", [(2, None)] * 3, 1),
        (2, "ray", None, False, "ray", [(2, None)] * 3, 4),
        # real LLM: simulations on threads; on a cluster one unit per job
        (1, "fork", 4, True, "inline", [(6, 4)], 1),
        (2, "fork", 4, True, "fork", [(4, 2), (2, 2)], 4),
        (2, "fork", 1, True, "fork", [(6, 1)], 2),
        (2, "loky", 1, True, "inline", [(6, 1)], 1),
        (2, "loky", None, True, "pool", [(4, 8), (2, 8)], 4),
        (2, "dask", 3, True, "dask", [(1, None)] * 6, 3),
    ],
)
def test_each_backend_runs_on_one_engine_with_its_job_shape(workers, backend, concurrency, threaded, engine, shape, limit):
    from tauguard.execution.driver import dispatch

    plan = dispatch(_units(["0", "1", "2"], 2), workers, backend, concurrency, threaded)
    assert plan.engine == engine and plan.limit == limit
    assert [(len(job.units), job.threads) for job in plan.jobs] == shape
    assert sorted(u.key for job in plan.jobs for u in job.units) == sorted(u.key for u in _units(["0", "1", "2"], 2))
    assert len({job.id for job in plan.jobs}) == len(plan.jobs)
