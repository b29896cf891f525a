"""`tauguard compare --uptake-curve`: one row per strategy and metric, one column per uptake."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tauguard.testing.synthetic_runs import TaskSpec, write_run
from typer.testing import CliRunner

from tauguard.cli.main import app

runner = CliRunner()
FEW = ["--resamples", "500"]


def _tasks(passes: int, n: int = 12) -> list[TaskSpec]:
    """n airline tasks, the first ``passes`` passing all 4 trials, the rest failing all."""
    return [TaskSpec("airline", str(i), [i < passes] * 4) for i in range(n)]


def _sim(root: Path, name: str, strategy: str, uptake: float | None, passes: int, feedback: str = "feedback") -> Path:
    manifest = {} if uptake is None else {"sim_feedback": feedback, "fault_profile": {"name": "realistic", "uptake": uptake}}
    return write_run(root, name, _tasks(passes), strategy=strategy, manifest=manifest)


@pytest.fixture()
def sweep(tmp_path: Path) -> list[Path]:
    """react (4 of 12 pass), ledger at uptake 0.2 / 0.8 (5 and 10 pass), workflow oracle at 0.8 (12 pass)."""
    return [
        _sim(tmp_path, "react", "react", 0.8, 4),
        _sim(tmp_path, "ledger-u0.2", "ledger", 0.2, 5),
        _sim(tmp_path, "ledger-u0.8", "ledger", 0.8, 10),
        _sim(tmp_path, "workflow-or", "workflow", 0.8, 12, feedback="oracle"),
    ]


def test_json_curve_has_one_point_per_run_and_metric(sweep: list[Path]) -> None:
    res = runner.invoke(app, ["compare", *map(str, sweep), "--uptake-curve", "--format", "json", *FEW])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["simulated"] is True and "assumption" in data["assumption"]
    ledger = {p["uptake"]: p for p in data["points"] if p["strategy"] == "ledger" and p["metric"] == "pass^4"}
    assert set(ledger) == {0.2, 0.8}
    assert ledger[0.2]["delta"] == pytest.approx(1 / 12) and ledger[0.8]["delta"] == pytest.approx(6 / 12)
    assert ledger[0.8]["ci_low"] <= ledger[0.8]["delta"] <= ledger[0.8]["ci_high"]
    (wf,) = [p for p in data["points"] if p["strategy"] == "workflow" and p["metric"] == "pass^4"]
    assert wf["sim_feedback"] == "oracle" and wf["delta"] == pytest.approx(8 / 12)
    assert any("UPPER BOUND" in n for n in data["notes"])


def test_markdown_curve_labels_the_uptake_assumption_and_the_oracle_row(sweep: list[Path]) -> None:
    res = runner.invoke(app, ["compare", *map(str, sweep), "--uptake-curve", "--format", "markdown", *FEW])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "SIMULATION" in out and "uptake is an assumption" in out
    header = next(line for line in out.splitlines() if line.startswith("| strategy"))
    assert "uptake 0.2" in header and "uptake 0.8" in header
    ledger = next(line for line in out.splitlines() if line.startswith("| ledger") and "Δpass^4" in line)
    assert "+0.083" in ledger and "+0.500" in ledger
    workflow = next(line for line in out.splitlines() if line.startswith("| workflow") and "Δpass^4" in line)
    assert "UPPER BOUND" in workflow and workflow.rstrip(" |").split("|")[-2].strip() == "-"  # no 0.2 cell


def test_a_run_without_uptake_or_a_duplicate_cell_is_an_input_error(sweep: list[Path], tmp_path: Path) -> None:
    real = write_run(tmp_path, "real", _tasks(3), simulated=False, strategy="ledger")
    res = runner.invoke(app, ["compare", str(sweep[0]), str(real), "--uptake-curve", *FEW])
    assert res.exit_code == 2 and "records no sim uptake" in res.stderr
    again = _sim(tmp_path, "ledger-again", "ledger", 0.2, 7)
    res = runner.invoke(app, ["compare", str(sweep[0]), str(sweep[1]), str(again), "--uptake-curve", *FEW])
    assert res.exit_code == 2 and "give one run per cell" in res.stderr
    res = runner.invoke(app, ["compare", *map(str, sweep), "--uptake-curve", "--format", "csv"])
    assert res.exit_code == 2 and "not csv" in res.stderr


def test_uptake_curve_imports_neither_tau2_nor_litellm(sweep: list[Path]) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from typer.testing import CliRunner
        from tauguard.cli.main import app
        res = CliRunner().invoke(app, ["compare", *{[str(p) for p in sweep]!r}, "--uptake-curve", "--resamples", "200"])
        assert res.exit_code == 0, res.output
        print("LOADED:" + ",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("tau2", "litellm"))))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "LOADED:"
