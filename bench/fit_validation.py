"""Validate fitted fault profiles: real pass^1 vs the fitted-profile sim's pass^1, and failure mixes.

Usage: python bench/fit_validation.py REAL_RUN SIM_RUN [REAL_RUN SIM_RUN ...]

REAL_RUN is an imported real run (`tauguard import`), SIM_RUN a `react` sim run with the profile
`tauguard faults fit REAL_RUN` wrote, on the real run's tasks (`--task-ids`; other tasks of the
sim run are left out here). Prints, per pair: real pass^1 with a 95 % Wilson interval (one trial
per task), the ceiling a fitted sim can reach (1 - attributed failures / n: unattributed failures
have no fault to simulate), the sim's pass^1 (mean over tasks of the per-task success rate) with
a 95 % task-clustered bootstrap interval, and the fault-class mix of the real failures (fit's
attributions) against the sim's failed trials (the class of the first fault that took effect),
each also as a share of its simulations; GC = a compliant refusal of a documented gold-conflict
write (`conflict_refusal`, a W hand-off that is not a fault). The sim numbers describe the simulator, not real LLMs.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from scipy.stats import binomtest, bootstrap

from tauguard.faults.draw import CONFLICT_REFUSAL
from tauguard.faults.fit import fit

from tauguard.runs.store import load_run

GC = "GC"  # a compliant refusal of a documented gold-conflict write (class W, shown apart)
# The sim user (tauguard.sim.user) says yes to every write the scenario wants and no to others;
# no real run's user reactions are fitted, so the validation states it beside every result.
USER_ASSUMPTION = "the sim user confirms every write its scenario wants (never declines or changes its mind)"


def _sim(run_dir: Path, tasks: set[str]) -> tuple[float, tuple[float, float], Counter[str], int]:
    run = load_run(run_dir, conversations=False)
    per_task: dict[str, list[float]] = defaultdict(list)
    mix: Counter[str] = Counter()
    for r in run.records:
        if r.success is None or r.task_id not in tasks:
            continue
        per_task[r.task_id].append(float(r.success))
        if not r.success:
            applied = sorted((f for f in r.faults if f.applied and not f.detail.get("not_applicable")), key=lambda f: f.step or 0)
            mix[(GC if applied[0].fault_id == CONFLICT_REFUSAL else applied[0].fault_class) if applied else "none"] += 1
    rates = np.array([np.mean(v) for v in per_task.values()])
    if np.ptp(rates) == 0:  # every task alike: the bootstrap has nothing to resample
        return float(rates.mean()), (float(rates.mean()), float(rates.mean())), mix, sum(len(v) for v in per_task.values())
    ci = bootstrap((rates,), np.mean, confidence_level=0.95, n_resamples=2000, random_state=0).confidence_interval
    return float(rates.mean()), (float(ci.low), float(ci.high)), mix, sum(len(v) for v in per_task.values())


def _shares(mix: Counter[str] | dict[str, int], n: int) -> str:
    return ", ".join(f"{c} {k} ({k / n:.2f})" for c, k in sorted(mix.items()))


def main(args: list[str]) -> None:
    """Print the validation table for each (real, sim) pair."""
    print("SIMULATION numbers (sim column) describe the simulator, not real LLMs.")
    print(f"Sim assumptions, not fitted: {USER_ASSUMPTION}; uptake and block_transfer as the profile states.")
    for real_dir, sim_dir in zip(args[::2], args[1::2]):
        result = fit([Path(real_dir)])
        n, ok = result.simulations, result.simulations - result.failures
        ci = binomtest(ok, n).proportion_ci(confidence_level=0.95, method="wilson")
        lo, hi = ci.low, ci.high
        tasks = {a.task_id for a in result.attributions} | set(_real_tasks(Path(real_dir)))
        sim, (slo, shi), sim_mix, trials = _sim(Path(sim_dir), tasks)
        ceiling = 1 - (result.failures - result.counts.get("unattributed", 0)) / n
        print(f"\n{Path(real_dir).name}")
        print(f"  real pass^1 {ok / n:.3f} [{lo:.3f}, {hi:.3f}] (n={n})   fitted-sim ceiling {ceiling:.3f}   "
              f"sim pass^1 {sim:.3f} [{slo:.3f}, {shi:.3f}] ({trials} trials)")
        real_mix = Counter(GC if a.fault_id == CONFLICT_REFUSAL else a.fault_class for a in result.attributions)
        print(f"  real failures by class (per simulation): {_shares(real_mix, n) or 'none'}")
        if result.not_reproducible:
            shown = ", ".join(f"{f} {k}" for f, k in sorted(result.not_reproducible.items()))
            print(f"  attributed where the sim cannot make the fault: {shown}")
        print(f"  sim failed trials by class of first fault (per trial): {_shares(sim_mix, trials) or 'none'}")


def _real_tasks(real_dir: Path) -> list[str]:
    return [r.task_id for r in load_run(real_dir, conversations=False).records]


if __name__ == "__main__":
    main(sys.argv[1:])
