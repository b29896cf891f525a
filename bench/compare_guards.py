"""Run react, ledger and action-guard with the same seed and fault profile, then compare.

Simulation only: the sim agent's injected faults stand in for real agents' mistakes, so the
figures describe the simulator, never real LLMs. Uses the library API (``tauguard.run``,
``tauguard.resume``, ``tauguard.compare_runs``). Usage:

    python bench/compare_guards.py --faults realistic -k 4 --out runs/guards
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import tauguard  # noqa: E402

STRATEGIES = ("react", "ledger", "action-guard")


def ensure_run(out: Path, name: str, config: dict) -> Path:
    """Run ``name`` under ``out``, or finish it if an earlier invocation was interrupted."""
    run_dir = out / name
    if (run_dir / "manifest.json").exists():
        return tauguard.resume(run_dir, workers=config["workers"]).run_dir
    return tauguard.run({**config, "out": str(out), "name": name}).run_dir


def main() -> None:
    from tauguard.cli.show import render
    from tauguard.analysis.render import render_compare_text
    from tauguard.analysis.summary import summarize

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
            config = {"strategy": strategy, "domains": [domain], "trials": args.trials, "faults": args.faults,
                      "seed": args.seed, "workers": args.workers}
            runs.append(ensure_run(out, name, config))
        print(f"\n## {domain}: compare (baseline react)\n")
        print(render_compare_text(tauguard.compare_runs(runs), args.format))
        for run_dir in runs:
            print(f"\n### {run_dir.name}\n")
            print(render(summarize(tauguard.load_run(run_dir)), args.format))


if __name__ == "__main__":
    main()
