"""Simulation study: coverage of compare's 95 % CI and false passes of check's non-inferiority gate.

For every cell (per-task model × tasks 6/10/20/50/100/200 × k 1/4 × true Δ 0/−margin/−0.1/−0.2) it simulates
``--datasets`` pairs of runs (1,000 by default) and reports

- coverage: the fraction of datasets whose 95 % CI of Δpass^k contains the true Δ, for the
  adjusted Wald CI `compare` and `check` use (:func:`tauguard.analysis.stats.adjusted_mean_cis`) and, for
  comparison, the paired percentile bootstrap they used before issue 24;
- gate pass rate: the fraction of datasets on which `check`'s non-inferiority gate (margin 0.05,
  at least 6 tasks) passes. At Δ ≤ −margin (−0.05, the boundary, where a false pass is likeliest,
  and −0.1, −0.2) the candidate is not within the margin, so every pass is a false pass; at Δ = 0
  the rate is how often the gate passes an unchanged strategy (what `check`'s design check estimates;
  `check` refuses designs below 80 %, so its real false-pass rate is at most the one printed).

The data-generating models (models of τ² runs, not a measurement of one):

- population ``mixed``: a task's baseline success probability p is 1 with probability 0.45, 0 with
  probability 0.15 (deterministic tasks: the sim with a fixed seed, or tasks every agent passes or
  fails), and Beta(4, 2) otherwise; population ``beta``: Beta(4, 2) for every task (no task is
  deterministic);
- change ``break``: the candidate breaks each task (success probability 0) with probability r and
  leaves it unchanged otherwise; r = −Δ / E[p^k] makes the population Δpass^k exactly Δ (per-task
  changes are binary);
- change ``shrink``: every task's probability is scaled, q = s·p with s^k = (E[p^k] + Δ) / E[p^k],
  so the population Δpass^k is exactly Δ and every per-task change is partial (not binary);
- every task gets ``--trials`` (4) independent trials per run; pass^k per task is C(c,k)/C(n,k).

Usage: ``python bench/bench_ci_coverage.py [--datasets 1000] [--bootstrap-resamples 2000]``
(seconds without the bootstrap; about a minute per model with it, on two loaded cores). Vectorised with numpy: the datasets of a cell are drawn
as one array, the adjusted CI is closed-form, and the bootstrap draws are chunked.
"""

from __future__ import annotations

import argparse
import itertools
import time
from math import comb

import numpy as np

from tauguard.analysis.decision import non_inferior
from tauguard.analysis.stats import adjusted_mean_cis

P_ONE, P_ZERO = 0.45, 0.15  # shares of always-passing and always-failing tasks (population "mixed")
MODELS = (("mixed", "break"), ("mixed", "shrink"), ("beta", "shrink"))
BETA = (4.0, 2.0)  # success probability of the other tasks
MARGIN = 0.05
MIN_TASKS = 6  # check's default minimum at 95 %


def beta_moment(k: int, a: float = BETA[0], b: float = BETA[1]) -> float:
    """E[p^k] for p ~ Beta(a, b)."""
    out = 1.0
    for i in range(k):
        out *= (a + i) / (a + b + i)
    return out


def population_pass_hat(k: int, population: str = "mixed") -> float:
    """E[p^k] over the task population: the baseline's population pass^k."""
    if population == "beta":
        return beta_moment(k)
    return P_ONE + (1 - P_ONE - P_ZERO) * beta_moment(k)


def simulate_diffs(
    rng: np.random.Generator, datasets: int, tasks: int, trials: int, k: int, delta: float,
    population: str = "mixed", change: str = "break",
) -> np.ndarray:
    """Per-task Δpass^k, shape (tasks, datasets), for one cell."""
    shape = (datasets, tasks)
    if population == "beta":
        p = rng.beta(*BETA, size=shape)
    else:
        u = rng.random(shape)
        p = np.where(u < P_ONE, 1.0, np.where(u < P_ONE + P_ZERO, 0.0, rng.beta(*BETA, size=shape)))
    base_hat = population_pass_hat(k, population)
    if change == "shrink":
        q = p * ((base_hat + delta) / base_hat) ** (1 / k)
    else:
        q = np.where(rng.random(shape) < -delta / base_hat, 0.0, p)
    table = np.array([comb(c, k) / comb(trials, k) for c in range(trials + 1)])  # pass^k by success count
    base = table[rng.binomial(trials, p)]
    cand = table[rng.binomial(trials, q)]
    return (cand - base).T


def percentile_bootstrap(rng: np.random.Generator, diffs: np.ndarray, resamples: int, chunk: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Paired percentile bootstrap CI (95 %) of every column's mean (the method before issue 24)."""
    tasks, datasets = diffs.shape
    lows, highs = np.empty(datasets), np.empty(datasets)
    for start in range(0, datasets, chunk):
        block = diffs[:, start : start + chunk].T  # (c, tasks)
        idx = rng.integers(0, tasks, size=(block.shape[0], resamples, tasks))
        means = np.take_along_axis(block[:, None, :], idx, axis=2).mean(axis=2)
        lows[start : start + chunk], highs[start : start + chunk] = np.quantile(means, [0.025, 0.975], axis=1)
    return lows, highs


def main() -> None:
    """Run every cell and print the markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=4, help="trials per task and run")
    parser.add_argument("--bootstrap-resamples", type=int, default=0, help="> 0 adds the method before issue 24")
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    rows = []
    cells = itertools.product(MODELS, (1, 4), (6, 10, 20, 50, 100, 200), (0.0, -MARGIN, -0.1, -0.2))
    for (population, change), k, tasks, delta in cells:
        diffs = simulate_diffs(rng, args.datasets, tasks, args.trials, k, delta, population, change)
        cis = adjusted_mean_cis(diffs, confidence=0.95)
        low = np.array([c.low for c in cis])
        high = np.array([c.high for c in cis])
        row = {
            "model": f"{population}/{change}", "k": k, "tasks": tasks, "delta": delta,
            "coverage": float(np.mean((low <= delta) & (delta <= high))),
            "gate_pass": float(np.mean(non_inferior(low, high, MARGIN))) if tasks >= MIN_TASKS else 0.0,
            "all_tied": float(np.mean(np.all(diffs == 0, axis=0))),
        }
        if args.bootstrap_resamples:
            b_low, b_high = percentile_bootstrap(rng, diffs, args.bootstrap_resamples)
            row["boot_coverage"] = float(np.mean((b_low <= delta) & (delta <= b_high)))
            row["boot_gate_pass"] = float(np.mean(b_low > -MARGIN))
        rows.append(row)
    elapsed = time.perf_counter() - started
    boot = bool(args.bootstrap_resamples)
    print(
        f"SIMULATION (a model of paired runs, not τ² or an LLM): {args.datasets} datasets per cell, "
        f"{args.trials} trials per task, margin {MARGIN}, seed {args.seed}; {elapsed:.1f} s\n"
    )
    head = "| model | k | tasks | Δ | datasets with every difference 0 | coverage of the 95 % CI | NI gate passes |"
    sep = "|---|---|---|---|---|---|---|"
    if boot:
        head += " coverage, percentile bootstrap (before) | NI gate passes, percentile bootstrap (before) |"
        sep += "---|---|"
    print("Adjusted Wald CI of Δpass^k (`compare`, `check`) and the non-inferiority gate at margin 0.05; "
          "at Δ ≤ −0.05 every pass is false\n\n" + head + "\n" + sep)
    for r in rows:
        line = (f"| {r['model']} | {r['k']} | {r['tasks']} | {r['delta']:+.2f} | {r['all_tied']:.3f} | "
                f"{r['coverage']:.3f} | {r['gate_pass']:.3f} |")
        print(line + (f" {r['boot_coverage']:.3f} | {r['boot_gate_pass']:.3f} |" if boot else ""))
    worst_cov = min(r["coverage"] for r in rows)
    worst_fp = max(r["gate_pass"] for r in rows if r["delta"] <= -MARGIN)
    cov_cell = min(rows, key=lambda r: r["coverage"])
    fp_cell = max((r for r in rows if r["delta"] <= -MARGIN), key=lambda r: r["gate_pass"])
    print(
        f"\nminimum coverage {worst_cov:.3f} (required >= 0.94; {cov_cell['model']}, k {cov_cell['k']}, "
        f"{cov_cell['tasks']} tasks, Δ {cov_cell['delta']:+.2f}); maximum false pass {worst_fp:.3f} (required <= 0.05; "
        f"{fp_cell['model']}, k {fp_cell['k']}, {fp_cell['tasks']} tasks, Δ {fp_cell['delta']:+.2f})"
    )


if __name__ == "__main__":
    main()
