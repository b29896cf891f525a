"""Simulations per second in sim mode: tauguard vs the plain tau2 pipeline.

Both sides run the same sim agent and sim user on airline base (react, no faults) with
2 joblib (loky) workers. The plain tau2 side builds the environment with tau2's own
constructor, runs tau2's Orchestrator and scores with tau2's evaluate_simulation, per
trial; tauguard adds its cached pristine database and gold hashes. Also times
`tauguard --help`. Usage: python bench/bench_run.py [--trials K]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def plain_tau2_unit(task_id: str, trial: int) -> float:
    """One simulation with tau2's own constructor and evaluator; returns the reward."""
    from loguru import logger

    logger.disable("tau2")
    from tau2.domains.airline.environment import get_environment
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.orchestrator.orchestrator import Orchestrator

    from tauguard import tau2compat as t2
    from tauguard.agents.guarded import GuardedAgent
    from tauguard.sim.agent import SimAgent
    from tauguard.sim.clean_plan import sim_plan
    from tauguard.sim.user import SimUser

    task = next(t for t in t2.load_tasks("airline", "base") if t.id == task_id)
    env = get_environment()
    plan = sim_plan("airline", task)
    agent_types, user_types = t2.tool_types("airline")
    agent = GuardedAgent(SimAgent("airline", task, plan, plan, [], env, 1.0, 300, trial), None, agent_types)
    sim = Orchestrator(domain="airline", agent=agent, user=SimUser(task, set(user_types)), environment=env, task=task,
                       max_steps=200, max_errors=10, seed=trial).run()
    return evaluate_simulation(sim, task, EvaluationType.ALL, False, "airline").reward


def bench_plain(trials: int) -> tuple[float, int]:
    from joblib import Parallel, delayed

    from tauguard import tau2compat as t2

    ids = [t.id for t in t2.load_tasks("airline", "base")]
    units = [(i, k) for k in range(trials) for i in ids]
    start = time.perf_counter()
    rewards = Parallel(n_jobs=2, backend="loky")(delayed(plain_tau2_unit)(i, k) for i, k in units)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2)
    args = parser.parse_args()
    help_s = bench_help()
    tg_s, tg_n = bench_tauguard(args.trials)
    plain_s, plain_n = bench_plain(args.trials)
    print(f"tauguard --help (median of 5): {help_s:.3f} s")
    print(f"tauguard run  : {tg_n} sims in {tg_s:.1f} s = {tg_n / tg_s:.2f} sims/s (wall, incl. worker start-up)")
    print(f"plain tau2    : {plain_n} sims in {plain_s:.1f} s = {plain_n / plain_s:.2f} sims/s (wall, incl. worker start-up)")
    print(f"ratio         : {(tg_n / tg_s) / (plain_n / plain_s):.2f}x")


if __name__ == "__main__":
    main()
