"""Run react, ledger and action-guard with the same seed and fault profile, then compare.

Simulation only: the sim agent's injected faults stand in for real agents' mistakes, so the
figures describe the simulator, never real LLMs. Usage:

    python bench/compare_guards.py --faults realistic -k 4 --out runs/guards
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

STRATEGIES = ("react", "ledger", "action-guard")


def tauguard(*args: str) -> str:
    """Run the CLI, failing loudly on errors; returns stdout."""
    proc = subprocess.run([sys.executable, "-m", "tauguard", *args], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"tauguard {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", default="realistic")
    parser.add_argument("-k", "--trials", type=int, default=4)
    parser.add_argument("--domains", default="airline,retail,telecom")
    parser.add_argument("--seed", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="runs/guards")
    parser.add_argument("--format", default="markdown", choices=("table", "markdown"))
    args = parser.parse_args()
    out = Path(args.out)
    for domain in args.domains.split(","):
        runs = []
        for strategy in STRATEGIES:
            name = f"{domain}-{strategy}-{args.faults}-k{args.trials}-s{args.seed}"
            run_dir = out / name
            if not (run_dir / "manifest.json").exists():
                tauguard("run", "--strategy", strategy, "--domain", domain, "-k", str(args.trials), "--faults", args.faults,
                         "--seed", str(args.seed), "--workers", str(args.workers), "--out", str(out), "--name", name, "--plain")
            else:
                tauguard("run", "--resume", str(run_dir), "--plain")
            runs.append(str(run_dir))
        print(f"\n## {domain}: compare (baseline react)\n")
        print(tauguard("compare", *runs, "--format", args.format))
        for run in runs:
            print(f"\n### {Path(run).name}\n")
            print(tauguard("show", run, "--format", args.format))


if __name__ == "__main__":
    main()
