"""Benchmark `tauguard compare` on full-size synthetic runs.

Builds two runs of 278 tasks x 4 trials (airline 50, retail 114, telecom 114) in a temporary
directory, then times:

- the end-to-end CLI (``python -m tauguard compare A B``, a fresh interpreter each time, so
  imports are included), and
- the library call (:func:`tauguard.compare.compare_runs` on loaded runs, and load + compare),

with 10,000 bootstrap resamples. Usage: ``python bench/bench_compare.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tauguard.compare import compare_runs
from tauguard.store import load_run
from tauguard.testing.synthetic_runs import TaskSpec, write_run

DOMAINS = {"airline": 50, "retail": 114, "telecom": 114}
TRIALS = 4
RESAMPLES = 10_000


def build_run(root: Path, name: str, p_pass: float, seed: int) -> Path:
    """Write a synthetic sim run with Bernoulli(p_pass) trial outcomes."""
    rng = random.Random(seed)
    tasks = []
    for dom, count in DOMAINS.items():
        for i in range(count):
            # Task difficulty varies, so pass^k spreads out as in real runs.
            p = min(1.0, max(0.0, p_pass + rng.uniform(-0.3, 0.3)))
            outcomes = [rng.random() < p for _ in range(TRIALS)]
            tasks.append(TaskSpec(domain=dom, task_id=str(i), outcomes=outcomes, policy_violation=i % 5 == 0))
    return write_run(root, name, tasks, strategy=name, trials=TRIALS)


def _time(fn, repeat: int) -> list[float]:  # noqa: ANN001 - any callable
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _fmt(times: list[float]) -> str:
    return f"median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f}, n={len(times)})"


def main() -> None:
    """Build the runs, time CLI and library, print wall times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="tauguard-bench-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        a = build_run(root, "baseline", 0.6, seed=1)
        b = build_run(root, "candidate", 0.65, seed=2)
        print(f"built 2 runs x {sum(DOMAINS.values())} tasks x {TRIALS} trials in {time.perf_counter() - start:.2f} s")

        cmd = [sys.executable, "-m", "tauguard", "compare", str(a), str(b), "--resamples", str(RESAMPLES)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        cli_times = _time(lambda: subprocess.run(cmd, capture_output=True, check=True), args.repeat)
        cli_json_times = _time(
            lambda: subprocess.run(cmd + ["--format", "json"], capture_output=True, check=True), args.repeat
        )
        import_times = _time(
            lambda: subprocess.run([sys.executable, "-c", "import tauguard.cli.main"], check=True), args.repeat
        )

        runs = [load_run(a), load_run(b)]
        lib_times = _time(lambda: compare_runs(runs, n_resamples=RESAMPLES), args.repeat)
        load_lib_times = _time(lambda: compare_runs([load_run(a), load_run(b)], n_resamples=RESAMPLES), args.repeat)

    print(f"resamples: {RESAMPLES}, ks: 1..{TRIALS}, bootstrap stratified by 3 domains")
    print(f"CLI `tauguard compare` (table), end to end:  {_fmt(cli_times)}")
    print(f"CLI `tauguard compare --format json`:        {_fmt(cli_json_times)}")
    print(f"  of which interpreter + `import tauguard.cli.main`: {_fmt(import_times)}")
    print(f"library compare_runs (runs loaded):          {_fmt(lib_times)}")
    print(f"library load_run x2 + compare_runs:          {_fmt(load_lib_times)}")
    print()
    print(out.splitlines()[0] if out.startswith("SIMULATION") else "")


if __name__ == "__main__":
    main()
