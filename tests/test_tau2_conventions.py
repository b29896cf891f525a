"""τ²'s command-line conventions (issue 38): `--task-ids 0 1 2` as well as commas, `--num-trials`
as `-k`, a hint naming the right form on an unexpected extra argument, help that survives a pipe,
`workflow show` a table by default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_helpers import tauguard
from tauguard.cli.conventions import spread_multi_values


def test_task_ids_take_spaces_as_tau2_does_and_stop_at_an_option_or_a_path(tmp_path: Path) -> None:
    assert spread_multi_values(["run", "--task-ids", "0", "1", "2", "-k", "1"]) == [
        "run", "--task-ids", "0", "--task-ids", "1", "--task-ids", "2", "-k", "1"]
    assert spread_multi_values(["audit", "--task-ids", "3", "4", str(tmp_path)]) == [
        "audit", "--task-ids", "3", "--task-ids", "4", str(tmp_path)]
    assert spread_multi_values(["run", "--task-ids", "0,1"]) == ["run", "--task-ids", "0,1"]
    assert spread_multi_values(["run", "--task-ids=0", "1"]) == ["run", "--task-ids=0", "--task-ids", "1"]
    assert spread_multi_values(["run", "--", "--task-ids", "0", "1"]) == ["run", "--", "--task-ids", "0", "1"]


@pytest.mark.parametrize(("ids", "trials"), [(["0", "1", "2"], ["--num-trials", "2"]), (["0,1,2"], ["-k", "2"]),
                                              (["0", "1,2"], ["--trials", "2"])])
def test_run_plans_the_same_units_in_every_spelling(tmp_path: Path, ids: list[str], trials: list[str]) -> None:
    proc = tauguard("run", "-d", "airline", "--task-ids", *ids, *trials, "--dry-run", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "units:     3 tasks x 2 trials = 6 simulations" in proc.stdout


@pytest.mark.parametrize(("args", "hint"), [
    (["run", "-d", "airline", "retail", "--dry-run"], "hint: -d takes one value per use: write -d airline,retail or -d airline -d retail"),
    (["run", "--strategy", "react", "ledger", "--dry-run"], "hint: --strategy takes one value (2 given: react ledger)"),
    (["run", "--name", "my", "run", "--dry-run"], 'hint: --name takes one value (2 given: my run): give one, or quote a value that holds spaces (--name "my run")'),
    (["audit", "RUN", "-s", "react", "ledger"], "hint: -s takes one value per use: write -s react -s ledger"),
    (["show", "RUN", "extra"], "hint: extra is not an argument of this command"),
])
def test_an_unexpected_extra_argument_gets_one_error_line_with_the_right_form(tmp_path: Path, args: list[str], hint: str) -> None:
    proc = tauguard(*[str(tmp_path) if a == "RUN" else a for a in args], cwd=tmp_path)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: Got unexpected extra argument") and hint in line
    assert not (tmp_path / "runs").exists()


def test_help_survives_a_pipe_whole() -> None:
    proc = tauguard("run", "-h")  # captured: not a terminal, as `tauguard run -h | cat`
    assert proc.returncode == 0
    text = re.sub(r"[│\s]+", " ", proc.stdout)
    assert "Resume an interrupted run directory (only --workers, --backend, --address, --concurrency and --max-cost may change)." in text
    for command in (["run"], ["audit"], ["compare"], ["dialogue", "eval"], ["probes", "build"]):
        out = tauguard(*command, "-h").stdout
        assert "…" not in out, command
        assert max(len(line) for line in out.splitlines()) <= 120, command


def test_workflow_show_defaults_to_a_table() -> None:
    table = tauguard("workflow", "show", "-d", "retail")
    assert table.returncode == 0 and table.stdout.split()[0] == "node"
    assert tauguard("workflow", "show", "-d", "retail", "--format", "mermaid").stdout.startswith("flowchart TD")


def test_piped_summaries_fit_120_columns_with_a_legend_for_every_abbreviation(tmp_path: Path) -> None:
    from tauguard.testing.synthetic_runs import random_tasks, write_run

    base = write_run(tmp_path, "base", random_tasks({"airline": 10, "retail": 10}, 4, 0.5, seed=1))
    cand = write_run(tmp_path, "cand", random_tasks({"airline": 10, "retail": 10}, 4, 0.7, seed=2), strategy="ledger")
    for args in (["show", str(base)], ["compare", str(base), str(cand)], ["check", str(cand), "--baseline", str(base)]):
        proc = tauguard(*args, env={"COLUMNS": None, "TAUGUARD_WIDE": None})  # a pipe: no terminal
        assert proc.returncode in (0, 1), proc.stderr
        assert max(len(line) for line in proc.stdout.splitlines()) <= 120, args
    shown = tauguard("show", str(base), env={"COLUMNS": None, "TAUGUARD_WIDE": None}).stdout
    legend = shown[shown.index("legend:"):]
    for term in ("pass^k:", "process-valid:", "step-TCR:", "trace-TCR:", "infra err:", "slice:", "§4.7"):
        assert term in legend, term
    assert ("pv^" in shown[: shown.index("legend:")]) == ("pv^k:" in legend)  # a column, its line
    compared = tauguard("compare", str(base), str(cand), env={"TAUGUARD_WIDE": None}).stdout
    assert "legend:" in compared and "pv^k:" in compared and "Δ, CI, p:" in compared
    # TAUGUARD_WIDE=1 keeps whole rows for scripts
    wide = tauguard("show", str(base), env={"TAUGUARD_WIDE": "1"})
    assert max(len(line) for line in wide.stdout.splitlines()) > 120
