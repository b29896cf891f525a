"""The fork backend: workers forked from the run's warm process give the same records as an
in-process run, and a worker that dies leaves its units pending for --resume (issue 16)."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from tauguard.execution import lifecycle, simulate
from tauguard.config import fork_available
from tauguard.execution.engines import WorkerLost
from tauguard.runs.store import iter_records

pytestmark = pytest.mark.skipif(not fork_available(), reason="the fork backend needs Linux")

CONFIG = {"domains": ["airline"], "num_tasks": 20, "trials": 2, "faults": "realistic",
          "seed": 300, "strategy": "ledger"}


def _outcomes(run_dir: Path) -> dict[tuple, tuple]:
    records, _ = iter_records(run_dir, conversations=True)
    out = {}
    for r in records:
        events = [(e.get("hook"), e.get("decision", {}).get("verdict")) for e in (r.model_dump()["guard_events"] or [])]
        messages = [(m.get("role"), m.get("content"), json.dumps(m.get("tool_calls"), sort_keys=True))
                    for m in r.model_dump()["simulation"]["messages"]]
        out[r.key] = (r.reward, r.success, r.termination_reason, [f.model_dump_json() for f in r.faults], events, messages)
    return out


@pytest.mark.slow
def test_forked_workers_give_the_records_of_an_in_process_run(tmp_path: Path):
    forked = lifecycle.run({**CONFIG, "workers": 2, "backend": "fork", "out": str(tmp_path), "name": "fork"})
    alone = lifecycle.run({**CONFIG, "workers": 1, "out": str(tmp_path), "name": "alone"})
    assert forked.manifest.config["backend"] == "fork" and forked.status == "completed"
    a, b = _outcomes(forked.run_dir), _outcomes(alone.run_dir)
    assert len(a) == 40 and a == b
    assert sum(1 for v in a.values() if v[3]) > 0  # realistic faults were injected and must match too


@pytest.mark.slow
@pytest.mark.parametrize("backend", [
    "fork",
    pytest.param("multiprocessing", marks=pytest.mark.skipif(
        multiprocessing.get_start_method() != "fork", reason="its workers inherit the patch only when they fork")),
])
def test_a_worker_that_dies_leaves_its_units_pending_for_resume(tmp_path: Path, monkeypatch, backend: str):
    """The fork engine and a pool engine (multiprocessing's workers fork too, so they inherit the
    patch) stop the run `interrupted` with WorkerLost; --resume records each unit exactly once."""
    real = simulate.run_unit

    def dies_on_task_3(spec):  # forked workers inherit this patch
        if spec.task_id == "3" and os.getpid() != parent:
            os._exit(7)
        return real(spec)

    parent = os.getpid()
    monkeypatch.setattr(simulate, "run_unit", dies_on_task_3)
    config = {**CONFIG, "workers": 2, "backend": backend, "out": str(tmp_path), "name": "lost"}
    with pytest.raises(WorkerLost, match=r"worker process died"):
        lifecycle.run(config)
    run_dir = tmp_path / "lost"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and "worker process died" in manifest["stop_reason"]
    records, _ = iter_records(run_dir, conversations=False)
    assert ("airline", "3", 0) not in {r.key for r in records}
    monkeypatch.setattr(simulate, "run_unit", real)
    resumed = lifecycle.resume(run_dir)
    assert resumed.status == "completed"
    records, _ = iter_records(run_dir, conversations=False)
    keys = [r.key for r in records if r.error is None]
    assert sorted(keys) == sorted({(d, t, k) for d, t, k in keys}) and len(keys) == 40  # each unit exactly once


def test_real_llm_units_run_on_threads_in_forked_workers(tmp_path: Path, monkeypatch):
    from test_execution_concurrency import _responder

    from tauguard.testing.llm_server import ScriptedLLMServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with ScriptedLLMServer(_responder) as server:
        config = {
            "domains": ["airline"], "task_ids": ["0", "1", "2"], "trials": 2, "workers": 2, "concurrency": 6,
            "backend": "fork", "agent_llm": "openai/a", "user_llm": "openai/u", "out": str(tmp_path), "name": "t",
            "llm_args": {"agent": {"api_base": server.api_base}, "user": {"api_base": server.api_base}},
        }
        plan = lifecycle.plan(config)
        assert "6 simulations in flight: threads in 2 process(es)" in "\n".join(plan.describe())
        result = lifecycle.execute(plan)
        requests = list(server.requests)
    assert result.status == "completed" and result.progress.errors == 0
    records, _ = iter_records(result.run_dir, conversations=False)
    assert sorted(r.key for r in records) == [("airline", t, k) for t in ("0", "1", "2") for k in (0, 1)]
    assert len(requests) == 24  # 4 completions per simulation, none lost or repeated across processes
    assert all(r.usage["agent"].calls >= 2 for r in records)


def test_sim_jobs_keep_a_tasks_trials_together_unless_workers_would_idle():
    from tauguard.execution.driver import sim_jobs
    from tauguard.execution.unit import UnitSpec

    def units(tasks: int, trials: int) -> list[UnitSpec]:
        return [UnitSpec(run_id="r", domain="airline", split="base", task_id=str(t), trial=k, seed=1, strategy="react",
                         agent_llm="sim", user_llm="sim", max_steps=1, max_errors=1, max_guard_retries=0,
                         fault_profile={}) for t in range(tasks) for k in range(trials)]

    many = sim_jobs(units(50, 4), workers=2)
    assert len(many) == 50 and all(len({u.task_id for u in job}) == 1 and len(job) == 4 for job in many)
    one_task = sim_jobs(units(1, 8), workers=4)
    assert [len(job) for job in one_task] == [1] * 8  # per (task, trial): all four workers get work
