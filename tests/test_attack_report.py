"""ASR@k per tactic and per clause, the utility/safety view, and `tauguard attacks` (no tau2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard.attacks.render import attack_lines
from tauguard.analysis.attack_report import attack_report
from tauguard.runs.records import AttackInfo, TrialRecord


def _rec(task: str, trial: int, success: bool, attack: bool | None | str, tactic: str = "insist", clause: str = "airline.x") -> TrialRecord:
    attacked = attack != "-"
    return TrialRecord(
        run_id="r", domain="airline", task_id=task, trial=trial, seed=0, strategy="react", simulated=True,
        policy_violation_task=attacked, reward=float(success), success=success, attacked=attacked,
        attack_success=None if not attacked else attack,  # type: ignore[arg-type]
        attack=AttackInfo(tactic=tactic, attack_set="policy-violation", target={"clause": clause}) if attacked else None,
    )


def test_breakdowns_per_tactic_and_clause_and_the_utility_safety_row() -> None:
    records = [
        # attacked task a (clause x): attacks succeed in 1 of 2 trials
        _rec("a", 0, False, True), _rec("a", 1, True, False),
        # attacked task b (clause y): never; one unknown outcome, excluded from ASR and counted
        _rec("b", 0, True, False, clause="airline.y"), _rec("b", 1, True, None, clause="airline.y"),
        # benign task c: passes once in two
        _rec("c", 0, True, "-"), _rec("c", 1, False, "-"),
    ]
    report = attack_report(records, "r", "react")
    assert report is not None
    (tactic,) = report.by_tactic
    assert (tactic.group, tactic.tasks, tactic.trials, tactic.successes, tactic.unknown) == ("insist", 2, 3, 1, 1)
    assert tactic.asr[0].value == pytest.approx((0.5 + 0.0) / 2)
    clauses = {g.group: g for g in report.by_clause}
    assert clauses["airline.x"].asr[1].value == 1.0 and clauses["airline.y"].asr[0].value == 0.0
    assert clauses["airline.y"].asr[1].value is None  # one known outcome cannot estimate k = 2
    view = report.utility_safety
    assert (view.benign_tasks, view.attacked_tasks, view.unknown) == (1, 2, 1)
    assert view.pass_hat[0].value == 0.5 and view.pass_hat[1].value == 0.0
    text = "\n".join(attack_lines(report, "simple"))
    assert "ASR@1" in text and "airline.y" in text and "benign tasks" in text
    assert attack_report([_rec("c", 0, True, "-")]) is None


def test_attacks_command_lists_targets_ids_and_runs(tmp_path: Path) -> None:
    from tauguard.cli.main import app
    from tauguard.runs.store import RecordWriter, write_manifest
    from tauguard.runs.records import Manifest

    runner = CliRunner()
    out = runner.invoke(app, ["attacks", "--attack-set", "craft-airline", "--ids"])
    assert out.exit_code == 0 and out.stdout.strip().split(",")[:2] == ["24", "28"]
    listed = runner.invoke(app, ["attacks", "--domain", "retail"])
    assert listed.exit_code == 0 and "rejected by tau2's return tool" in listed.stdout
    bad = runner.invoke(app, ["attacks", "--attack-set", "nope"])
    assert bad.exit_code == 2

    run_dir = tmp_path / "r"
    write_manifest(run_dir, Manifest(
        run_id="r", status="completed", created_at="t", updated_at="t", simulated=True, strategy="ledger",
        domains=["airline"], split="base", task_ids={"airline": ["a", "c"]}, trials=2, agent_llm="sim",
        user_llm="sim", seed=0, max_steps=10,
    ))  # fmt: skip
    writer = RecordWriter(run_dir)
    for rec in [_rec("a", 0, True, False), _rec("a", 1, True, True), _rec("c", 0, True, "-"), _rec("c", 1, True, "-")]:
        writer.write(rec)
    writer.close()
    table = runner.invoke(app, ["attacks", str(run_dir)])
    assert table.exit_code == 0 and "SIMULATION" in table.stdout
    row = next(line for line in table.stdout.splitlines() if line.startswith(("react", "ledger")))
    assert row.split()[:3] == ["ledger", "insist", "1"] and "0.500" in row
    shown = runner.invoke(app, ["show", str(run_dir)])
    assert shown.exit_code == 0 and "by violated clause" in shown.stdout
