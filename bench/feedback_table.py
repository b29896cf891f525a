"""A markdown table of each guard's Δpass^4 against react, per run (sim feedback and uptake shown).

Usage: python bench/feedback_table.py BASELINE_RUN RUN [RUN ...]

Every row is a SIMULATION number (the built-in sim agent and user), never a real-LLM finding;
rows made with ``--sim-feedback oracle`` are an upper bound.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tauguard.runs.store import load_run


def row(baseline: str, run: str) -> str:
    """One table row: strategy, feedback, uptake, pass^4 and process_valid^4 with Δ and CI."""
    m = load_run(run, records=False).manifest
    cells = [f"`{m.strategy}`", m.sim_feedback or "-", f"{m.fault_profile.get('uptake')}"]
    out = subprocess.run(["tauguard", "compare", baseline, run, "--format", "json"], capture_output=True, text=True, check=True).stdout
    comparison = json.loads(out)["comparisons"][0]
    for block in (comparison, *comparison["other_metrics"]):
        result = next(r for r in block["results"] if r["k"] == 4)
        cells.append(f"{result['baseline']:.3f} → {result['candidate']:.3f}")
        cells.append(f"{result['delta']:+.3f} [{result['ci_low']:+.3f}, {result['ci_high']:+.3f}] {result['verdict']}")
    return "| " + " | ".join(cells) + " |"


def main(args: list[str]) -> None:
    """Print the SIMULATION line (when a run is simulated), the header and one row per run."""
    from tauguard.runs.records import SIMULATION_NOTE

    if any(load_run(run, records=False).manifest.simulated for run in args):
        print(f"> **{SIMULATION_NOTE}**\n")
    print("| strategy | sim feedback | uptake | pass^4 react → guard | Δpass^4 [95% CI] | process_valid^4 react → guard | Δ [95% CI] |")
    print("|---|---|---|---|---|---|---|")
    for run in args[1:]:
        print(row(args[0], run))


if __name__ == "__main__":
    main(sys.argv[1:])
