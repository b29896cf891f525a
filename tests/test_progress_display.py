"""The run's progress line: cost and tokens per role, cache hits, retries and waits for
real-LLM runs; only the pass rate for sim runs."""

from __future__ import annotations

from tauguard.cli.progress import RunDisplay, UsageTally, status_text
from tauguard.execution.batch import Progress
from tauguard.runs.records import TrialRecord
from tauguard.usage_ledger import RoleUsage


def _record(trial: int, usage: dict[str, RoleUsage], success: bool = True) -> TrialRecord:
    return TrialRecord(
        run_id="r", domain="airline", task_id="0", trial=trial, seed=1, strategy="react", simulated=False,
        policy_violation_task=False, reward=1.0 if success else 0.0, success=success, usage=usage,
    )


def test_plain_line_sums_usage_per_role(capsys) -> None:
    records = [
        _record(0, {
            "agent": RoleUsage(cost=0.01, prompt_tokens=9000, completion_tokens=300, calls=3, retries=1, waited_s=3.0),
            "user": RoleUsage(cost=0.0045, prompt_tokens=4000, completion_tokens=500, calls=2),
            "guard": RoleUsage(cost=0.0, calls=1),  # a call without tokens or cost: not shown
        }),
        _record(1, {
            "agent": RoleUsage(cost=0.0023, prompt_tokens=3000, completion_tokens=0, calls=2, cache_hits=1, waited_s=1.2),
            "attacker": RoleUsage(cost=0.0002, prompt_tokens=150, completion_tokens=50, calls=1),
        }, success=False),
    ]
    display = RunDisplay(total=2, already=0, plain=True)
    progress = Progress(total=2)
    for rec in records:
        progress.update(rec)
        display.update(rec, progress)
    display.close()
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("[2/2] airline/0 trial 1: fail | pass 0.50 · ")
    assert (
        "cost agent $0.0123 user $0.0045 attacker $0.0002 · tokens agent 12.3k user 4.5k attacker 200"
        " · cache 1 hits · retries 1 · waited 4.2 s | eta" in last
    )


def test_sim_runs_show_no_usage() -> None:
    tally = UsageTally()
    sim = _record(0, {"agent": RoleUsage(calls=12), "user": RoleUsage(calls=4), "guard": RoleUsage()})
    tally.add(sim)
    progress = Progress(total=3)
    progress.update(sim)
    assert tally.render() == "" and status_text(progress, tally) == "pass 1.00"


def test_cache_option_is_planned_and_a_file_is_refused(tmp_path, capsys, monkeypatch) -> None:
    import sys

    import pytest

    from tauguard.cli.main import main

    def cli(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["tauguard", "run", "--dry-run", "--out", str(tmp_path / "runs"), *args])
        with pytest.raises(SystemExit) as exit_:
            main()
        out, err = capsys.readouterr()
        return int(exit_.value.code or 0), out, err

    code, out, _ = cli("--cache", str(tmp_path / "llm-cache"))
    assert code == 0 and f"cache:     {tmp_path / 'llm-cache'}" in out
    (tmp_path / "a-file").write_text("x")
    code, _, err = cli("--cache", str(tmp_path / "a-file"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("error: invalid value for 'cache'") and err.strip().endswith("must be a directory (it is a file)")
    assert not (tmp_path / "runs").exists()


def test_eta_counts_the_units_in_flight():
    """4 units in flight, 10 s each, 40 units, 30 s of start-up: after 2 waves (8 units, 20 s of
    work) 32 units are left, 8 waves of 4: 80 s. The rate between completions alone said 46 s."""
    import pytest

    from tauguard.cli.progress import Eta

    now = [0.0]
    eta = Eta(clock=lambda: now[0])
    for wave in (1, 2):
        for unit in range(4):
            now[0] = 30.0 + 10.0 * wave + 0.01 * unit  # a wave's units finish within moments
            eta.observe(10.0)
    assert eta.seconds_left(32) == pytest.approx(80.0, rel=0.01)
    untimed = Eta(clock=lambda: now[0])  # durations unknown: the rate between completions
    for t in (130.0, 132.0, 134.0):
        now[0] = t
        untimed.observe()
    assert untimed.seconds_left(10) == pytest.approx(20.0)
    sequential = Eta(clock=lambda: now[0])  # one unit at a time: the same as before
    for t in (40.0, 50.0, 60.0):
        now[0] = t
        sequential.observe(10.0)
    assert sequential.seconds_left(5) == pytest.approx(50.0)
