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
- default: airline base (50 tasks x ``--trials``), 2 loky workers on both sides, each side a
  fresh interpreter: ``tauguard run`` end to end and the plain pipeline. For each: simulations
  per second with start-up (wall from launch to the last simulation) and without it (from the
  first finished simulation to the last), the CPU seconds of its process tree (workers
  included), the CPU per simulation without start-up (from a second, 1-task run of the same
  side: (CPU(N) - CPU(1)) / (N - 1)), and the ratios. At 50 simulations (``--trials 1``)
  start-up is most of a run; on a loaded machine trust the CPU figures, on an idle one all.

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


def plain_side(trials: int, num_tasks: int | None) -> None:
    """The plain pipeline over airline base (2 loky workers), in this process: prints the seconds
    from this call to the first and to the last finished simulation."""
    from joblib import Parallel, delayed

    from tauguard.tau2_adapter import compat as t2

    start = time.perf_counter()
    ids = [t.id for t in t2.load_tasks("airline", "base")][:num_tasks]
    units = [(i, k) for k in range(trials) for i in ids]
    first = None
    rewards = []
    jobs = (delayed(plain_tau2_unit)("airline", i, k) for i, k in units)
    for reward in Parallel(n_jobs=2, backend="loky", return_as="generator_unordered")(jobs):
        first = time.perf_counter() - start if first is None else first
        rewards.append(reward)
    assert all(r == 1.0 for r in rewards), "the plain pipeline should pass every task too"
    print(json.dumps({"first": first, "end": time.perf_counter() - start, "sims": len(units)}))


def _tree(cmd: list[str], poll: Path | None = None) -> tuple[float, float, float, str]:
    """Run ``cmd``; return (s to the first record of ``poll``, s to the end, CPU s of its process
    tree, stdout). Workers are reaped by the command, so their CPU counts in its rusage."""
    sink = tempfile.TemporaryFile()  # not a pipe: a chatty child must never block on it
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.DEVNULL, env=dict(os.environ))
    first = None
    # wait4 (not poll, which would reap the child and lose its rusage) until it exits.
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG if poll is not None else 0)
        if pid:
            break
        if first is None and poll is not None and poll.exists() and poll.stat().st_size > 0:
            first = time.perf_counter() - start
        time.sleep(0.005)
    end = time.perf_counter() - start
    sink.seek(0)
    out = sink.read().decode()
    sink.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return (first if first is not None else end), end, usage.ru_utime + usage.ru_stime, out


def bench_tauguard(trials: int, num_tasks: int | None) -> tuple[float, float, float, int]:
    """(s to the first record, s to the end, CPU s of the process tree, simulations) of one `tauguard run`."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "tauguard", "run", "--strategy", "react", "--domain", "airline", "-k", str(trials),
               "--workers", "2", "--out", out, "--name", "bench", "--plain"]
        first, end, cpu, _ = _tree(cmd + (["--num-tasks", str(num_tasks)] if num_tasks else []),
                                   poll=Path(out) / "bench" / "simulations.jsonl")
        return first, end, cpu, sum(1 for _ in open(Path(out) / "bench" / "simulations.jsonl", "rb"))


def bench_plain(trials: int, num_tasks: int | None) -> tuple[float, float, float, int]:
    """The same figures for the plain pipeline, run as a fresh interpreter."""
    cmd = [sys.executable, __file__, "--plain-side", "--trials", str(trials)] + (["--tasks", str(num_tasks)] if num_tasks else [])
    _, end, cpu, out = _tree(cmd)
    got = json.loads(out.strip().splitlines()[-1])
    # The child's clock starts after its interpreter and imports (and stops before its exit):
    # shift its first simulation by that offset.
    return got["first"] + (end - got["end"]), end, cpu, got["sims"]


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
    parser.add_argument("--tasks", type=int, default=None, help="--breakdown: tasks per domain (default 20).")
    parser.add_argument("--plain-side", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--domains", default="airline,retail,telecom")
    args = parser.parse_args()
    args.tasks_given = args.tasks is not None
    args.tasks = 20 if args.tasks is None else args.tasks
    if args.breakdown:
        for row in breakdown(args.domains.split(","), args.tasks, args.trials):
            print(json.dumps(row))
        return
    if args.plain_side:
        plain_side(args.trials, args.tasks if args.tasks_given else None)
        return
    help_s = bench_help()
    print(f"tauguard --help (median of 5): {help_s:.3f} s")
    sides = {"tauguard run": bench_tauguard, "plain tau2": bench_plain}
    figures = {}
    for name, bench in sides.items():
        first, end, cpu, n = bench(args.trials, None)
        _, _, cpu_one, n_one = bench(1, 1)
        per_sim = (cpu - cpu_one) / (n - n_one)
        figures[name] = (n / end, (n - 1) / (end - first) if end > first else float("nan"), cpu / n, per_sim)
        print(f"{name:<13}: {n} sims; wall {end:.1f} s (first simulation at {first:.1f} s); "
              f"{n / end:.2f} sims/s with start-up, {figures[name][1]:.2f} without; CPU {cpu:.1f} s "
              f"({1000 * cpu / n:.0f} ms/sim with start-up, {1000 * per_sim:.1f} ms/sim without; a 1-sim run "
              f"{cpu_one:.1f} s); load {os.getloadavg()[0]:.1f}", flush=True)
    t, p = figures["tauguard run"], figures["plain tau2"]
    print(f"ratio (tauguard / plain): wall throughput {t[0] / p[0]:.2f}x with start-up, {t[1] / p[1]:.2f}x without; "
          f"CPU per simulation {p[2] / t[2]:.2f}x with start-up, {p[3] / t[3]:.2f}x without")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

if __name__ == "__main__":
    main()
