"""Sim-mode speed: tauguard vs the plain tau2 pipeline, and where each simulation's time goes.

Both sides run the same sim agent and sim user (react, no faults). The plain tau2 side
builds the environment with tau2's own constructor, runs tau2's Orchestrator and scores
with tau2's evaluate_simulation, per trial.

Modes (CPU time is measured with ``time.process_time``: on a loaded shared machine wall
times are inflated, CPU times much less so):

- ``--breakdown``: per domain, in this process, CPU ms per simulation by phase
  (environment, setup, conversation, guard, evaluation, gold side, record build, record
  write, and how much of it the garbage collector took), plus the plain tau2 pipeline's
  CPU per simulation on the same tasks;
- default: airline base, 2 loky workers, simulations per second (wall) of ``tauguard run``
  end to end (worker start-up included) and of the plain pipeline, and their ratio.

Usage: python bench/bench_run.py [--trials K] [--breakdown [--tasks N] [--domains a,b]]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def plain_tau2_unit(domain: str, task_id: str, trial: int) -> float:
    """One simulation with tau2's own constructor and evaluator; returns the reward."""
    from loguru import logger

    logger.disable("tau2")
    import importlib

    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.orchestrator.orchestrator import Orchestrator

    from tauguard.tau2_adapter import compat as t2
    from tauguard.agents.guarded import GuardedAgent
    from tauguard.sim.agent import SimAgent
    from tauguard.sim.clean_plan import sim_plan
    from tauguard.sim.user import SimUser

    task = next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)
    env = importlib.import_module(f"tau2.domains.{domain}.environment").get_environment()
    plan = sim_plan(domain, task)  # cached per task: the sim agent's plan, not tau2's cost
    agent_types, user_types = t2.tool_types(domain)
    agent = GuardedAgent(SimAgent(domain, task, plan, plan, [], env, 1.0, 300, trial), None, agent_types)
    sim = Orchestrator(domain=domain, agent=agent, user=SimUser(task, set(user_types)), environment=env, task=task,
                       max_steps=200, max_errors=10, seed=trial).run()
    return evaluate_simulation(sim, task, EvaluationType.ALL, False, domain).reward


def bench_plain(trials: int) -> tuple[float, int]:
    from joblib import Parallel, delayed

    from tauguard.tau2_adapter import compat as t2

    ids = [t.id for t in t2.load_tasks("airline", "base")]
    units = [(i, k) for k in range(trials) for i in ids]
    start = time.perf_counter()
    rewards = Parallel(n_jobs=2, backend="loky")(delayed(plain_tau2_unit)("airline", i, k) for i, k in units)
    elapsed = time.perf_counter() - start
    assert all(r == 1.0 for r in rewards), "the plain pipeline should pass every task too"
    return elapsed, len(units)


def bench_tauguard(trials: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "tauguard", "run", "--strategy", "react", "--domain", "airline", "-k", str(trials),
             "--workers", "2", "--out", out, "--name", "bench", "--plain"],
            check=True, capture_output=True,
        )
        return time.perf_counter() - start, 50 * trials


def bench_help(repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tauguard", "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


# --- per-phase breakdown ---------------------------------------------------------------


class PhaseClock:
    """CPU time per phase; nested phases are charged to the innermost one."""

    def __init__(self) -> None:
        self.total: dict[str, float] = defaultdict(float)
        self._stack: list[list[Any]] = []
        self.gc_s = 0.0
        self._gc_start = 0.0
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.process_time()
        else:
            self.gc_s += time.process_time() - self._gc_start

    def wrap(self, owner: Any, name: str, phase: str) -> None:
        """Charge every call of ``owner.name`` to ``phase``."""
        fn: Callable[..., Any] = getattr(owner, name)
        clock = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            clock._stack.append([phase, 0.0])
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.process_time() - start
                _, children = clock._stack.pop()
                clock.total[phase] += elapsed - children
                if clock._stack:
                    clock._stack[-1][1] += elapsed

        setattr(owner, name, timed)

    def reset(self) -> None:
        self.total.clear()
        self.gc_s = 0.0


def _spec(domain: str, task_id: str, trial: int) -> Any:
    from tauguard.execution.unit import UnitSpec

    return UnitSpec(run_id="bench", domain=domain, split="base", task_id=task_id, trial=trial, seed=300,
                    strategy="react", agent_llm="sim", user_llm="sim", max_steps=200, max_errors=10,
                    max_guard_retries=3, fault_profile={"name": "none"})


def breakdown(domains: list[str], tasks: int, trials: int) -> list[dict[str, Any]]:
    """CPU ms per simulation by phase, per domain (in this process, after warm-up)."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.agents.guarded import GuardedAgent
    from tauguard.tau2_adapter.evaluation import CachedEvaluator
    from tauguard.execution import simulate
    from tauguard.runs.records import TrialRecord
    from tauguard.runs.store import RecordWriter

    clock = PhaseClock()
    clock.wrap(t2, "make_environment", "environment")
    clock.wrap(simulate, "_build_agent", "setup")
    clock.wrap(simulate, "_build_user", "setup")
    for hook in ("_observe_incoming", "_gate", "_observe_outgoing"):
        clock.wrap(GuardedAgent, hook, "guard")
    clock.wrap(t2.orchestrator_class(), "run", "conversation")
    clock.wrap(CachedEvaluator, "evaluate", "evaluation")
    clock.wrap(CachedEvaluator, "_gold_states", "gold side")
    clock.wrap(simulate, "run_unit", "record build + other")
    clock.wrap(RecordWriter, "write", "record write")
    clock.wrap(TrialRecord, "model_validate", "record write")
    rows = []
    for domain in domains:
        ids = [t.id for t in t2.load_tasks(domain, "base")]
        simulate.run_unit(_spec(domain, ids[-1], 0))  # warm-up: imports, pristine database, gc.freeze
        chosen = ids[:tasks]
        with tempfile.TemporaryDirectory() as out:
            writer = RecordWriter(Path(out))
            clock.reset()
            start = time.process_time()
            for trial in range(trials):
                for task_id in chosen:
                    record = TrialRecord.model_validate(simulate.run_unit(_spec(domain, task_id, trial)))
                    assert record.error is None, record.error
                    writer.write(record)
            cpu = time.process_time() - start
            gc_s = clock.gc_s
            writer.close()
            size = (Path(out) / "simulations.jsonl").stat().st_size
        n = len(chosen) * trials
        plain_start = time.process_time()
        for task_id in chosen[: max(1, min(5, len(chosen)))]:
            plain_tau2_unit(domain, task_id, 0)
        plain_n = max(1, min(5, len(chosen)))
        rows.append({
            "domain": domain, "sims": n, "cpu_ms_per_sim": round(1000 * cpu / n, 2),
            "phases_ms_per_sim": {p: round(1000 * v / n, 2) for p, v in sorted(clock.total.items(), key=lambda x: -x[1])},
            "gc_ms_per_sim": round(1000 * gc_s / n, 2),
            "record_bytes_per_sim": size // n,
            "plain_tau2_cpu_ms_per_sim": round(1000 * (time.process_time() - plain_start) / plain_n, 1),
        })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--breakdown", action="store_true")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--domains", default="airline,retail,telecom")
    args = parser.parse_args()
    if args.breakdown:
        for row in breakdown(args.domains.split(","), args.tasks, args.trials):
            print(json.dumps(row))
        return
    help_s = bench_help()
    tg_s, tg_n = bench_tauguard(args.trials)
    plain_s, plain_n = bench_plain(args.trials)
    print(f"tauguard --help (median of 5): {help_s:.3f} s")
    print(f"tauguard run  : {tg_n} sims in {tg_s:.1f} s = {tg_n / tg_s:.2f} sims/s (wall, incl. worker start-up)")
    print(f"plain tau2    : {plain_n} sims in {plain_s:.1f} s = {plain_n / plain_s:.2f} sims/s (wall, incl. worker start-up)")
    print(f"ratio         : {(tg_n / tg_s) / (plain_n / plain_s):.2f}x")


if __name__ == "__main__":
    main()
