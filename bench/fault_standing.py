"""Where each guard stands on a fault: injected, detected, prevented and failed trials, per run.

Usage: python bench/fault_standing.py RUN [RUN ...]

Each RUN is a sim run with a stress profile holding one fault (e.g. rate 1.0). Prints a
markdown row per run: strategy, fault, trials with the fault injected, detected (a guard held
the faulty call at least once), prevented (the mistake never reached the environment), trials
failed among them, and pass^1 over all trials. SIMULATION numbers: they describe the simulator
(the built-in sim agent and user), not real LLMs.
"""

from __future__ import annotations

import sys

from tauguard.runs.store import load_run


def row(run_dir: str) -> str:
    """One markdown row for ``run_dir``."""
    run = load_run(run_dir, conversations=False)
    rates = run.manifest.fault_profile.get("rates") or {}
    fault = ", ".join(sorted(f for f, r in rates.items() if r > 0)) or "-"
    injected = detected = prevented = failed = 0
    for record in run.records:
        applied = [f for f in record.faults if f.applied and not f.detail.get("not_applicable")]
        if not applied:
            continue
        injected += 1
        detected += any(f.intercepted for f in applied)
        prevented += all(f.reached is False for f in applied)
        failed += not record.success
    scored = [r for r in run.records if r.success is not None]
    pass1 = sum(bool(r.success) for r in scored) / len(scored) if scored else float("nan")
    return f"| `{fault}` | `{run.manifest.strategy}` | {injected} | {detected} | {prevented} | {failed} | {pass1:.3f} |"


def main(args: list[str]) -> None:
    """Print the header and one row per run."""
    print("SIMULATION numbers: the built-in sim agent and user, not real LLMs.\n")
    print("| fault | strategy | injected | detected | prevented | failed (of injected) | pass^1 |")
    print("|---|---|---|---|---|---|---|")
    for run_dir in args:
        print(row(run_dir))


if __name__ == "__main__":
    main(sys.argv[1:])
