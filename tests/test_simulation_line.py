"""Every output derived from the sim carries the SIMULATION line (README: "every output of a sim
run says SIMULATION"): one test runs every CLI command (and bench script) that prints figures
made with the built-in sim model and checks each output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO, tauguard
from tauguard.testing.synthetic_runs import random_tasks, write_run


@pytest.mark.slow
def test_every_sim_derived_output_carries_the_simulation_line(tmp_path: Path) -> None:
    made = tauguard("run", "-d", "retail", "--task-ids", "0", "1", "-k", "1", "--out", str(tmp_path), "--name", "sim")
    assert made.returncode == 0, made.stderr
    sim = str(tmp_path / "sim")
    base = str(write_run(tmp_path, "base", random_tasks({"airline": 12}, 4, 0.5, seed=1)))
    cand = str(write_run(tmp_path, "cand", random_tasks({"airline": 12}, 4, 0.7, seed=2), strategy="ledger"))
    probes = tmp_path / "probes.jsonl"
    commands: list[list[str]] = [
        ["show", sim], ["show", base],
        ["compare", base, cand], ["compare", base, cand, "--format", "markdown"],
        ["check", cand, "--baseline", base, "--mode", "regression"],
        ["power", base, "--delta", "0.2"],
        ["report", base, cand, "-o", str(tmp_path / "r.html"), "--resamples", "100"],
        ["export", sim, "-o", str(tmp_path / "export.json")],
        ["audit", sim, "-s", "react"],
        ["probes", "build", "-d", "retail", "--task-ids", "0", "-o", str(probes)],
        ["probes", "build", "--from-run", sim, "-o", str(tmp_path / "from-run.jsonl")],
        ["probes", "eval", "-p", str(probes), "-s", "react"],
        ["probes", "sweep", "-d", "retail", "--task-ids", "0", "-s", "react"],
    ]
    missing = [" ".join(made.args[3:5]) + " (run)"] if "SIMULATION" not in made.stdout else []
    for args in commands:
        proc = tauguard(*args)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        if "SIMULATION" not in proc.stdout:
            missing.append(" ".join(args[:2]))
    table = subprocess.run([sys.executable, str(REPO / "bench" / "feedback_table.py"), base, cand],
                           capture_output=True, text=True, cwd=REPO, timeout=600)
    assert table.returncode == 0, table.stderr
    if "SIMULATION" not in table.stdout:
        missing.append("bench/feedback_table.py")
    assert missing == []
