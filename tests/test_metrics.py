"""pass^k, pass@k, ASR@k and slicing, against hand-worked values."""

from __future__ import annotations

from math import comb
from pathlib import Path

import pytest
from tauguard.testing.synthetic_runs import TaskSpec, write_run

from tauguard.analysis.metrics import TaskOutcome, asr_at_k, k_metric, parse_metric, pass_at_k, pass_hat_k
from tauguard.analysis.task_table import task_outcomes
from tauguard.analysis.summary import summarize_run
from tauguard.runs.records import TrialRecord
from tauguard.runs.store import load_run


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 4, 4, 1.0),
        (4, 3, 1, 0.75),
        (4, 3, 2, 0.5),  # C(3,2)/C(4,2) = 3/6
        (4, 3, 3, 0.25),  # C(3,3)/C(4,3) = 1/4
        (4, 3, 4, 0.0),
        (4, 2, 2, 1 / 6),
        (3, 2, 2, 1 / 3),
        (5, 0, 1, 0.0),
        (8, 5, 3, 10 / 56),
    ],
)
def test_pass_hat_k_table(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 1, 1, 0.25),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2)
        (4, 0, 3, 0.0),
        (4, 3, 2, 1.0),  # fewer than 2 failures: any pair holds a success
        (5, 2, 3, 0.9),  # 1 - C(3,3)/C(5,3)
        (4, 4, 4, 1.0),
    ],
)
def test_pass_at_k_table(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_hat_k_one_equals_success_rate_and_never_exceeds_pass_at_k() -> None:
    for n in range(1, 7):
        for c in range(n + 1):
            assert pass_hat_k(n, c, 1) == pytest.approx(c / n)
            for k in range(1, n + 1):
                assert pass_hat_k(n, c, k) <= pass_at_k(n, c, k) + 1e-12


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 4), (3, 4, 1), (3, 1, 0)])
def test_invalid_counts_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def _rec(task: str, trial: int, **kw: object) -> TrialRecord:
    base: dict[str, object] = dict(
        run_id="r",
        domain="retail",
        task_id=task,
        trial=trial,
        seed=trial,
        strategy="react",
        simulated=True,
        policy_violation_task=False,
    )
    base.update(kw)
    return TrialRecord.model_validate(base)


def test_task_outcomes_excludes_infra_errors_and_uses_tau2_tolerance() -> None:
    records = [
        _rec("t", 0, reward=1.0 - 5e-7),  # within tau2's 1e-6: a success
        _rec("t", 1, reward=0.999),  # outside: a failure
        _rec("t", 2, reward=None, error="rate limited"),
        _rec("t", 3, reward=0.0, success=True),  # an explicit success field wins over the reward
    ]
    (out,) = task_outcomes(records)
    assert (out.trials, out.successes, out.infra_errors) == (3, 2, 1)
    assert out.reward_sum == pytest.approx(1.0 - 5e-7 + 0.999)


def test_tasks_with_fewer_than_k_trials_are_excluded_and_counted() -> None:
    outcomes = [
        TaskOutcome(domain="d", task_id="a", policy_violation_task=False, trials=4, successes=4),
        TaskOutcome(domain="d", task_id="b", policy_violation_task=False, trials=2, successes=1),
    ]
    k1 = k_metric(outcomes, "pass^", 1)
    assert (k1.value, k1.tasks, k1.excluded_tasks) == (pytest.approx((1 + 0.5) / 2), 2, 0)
    k3 = k_metric(outcomes, "pass^", 3)
    # Only task a (n=4) can estimate pass^3; task b would otherwise drag the mean to 0.5.
    assert (k3.value, k3.tasks, k3.excluded_tasks) == (1.0, 1, 1)


def test_asr_excludes_unknown_outcomes_instead_of_counting_them_as_failed_attacks() -> None:
    out = task_outcomes(
        [
            _rec("t", 0, reward=0.0, attacked=True, attack_success=True),
            _rec("t", 1, reward=1.0, attacked=True, attack_success=False),
            _rec("t", 2, reward=1.0, attacked=True, attack_success=False),
            _rec("t", 3, reward=1.0, attacked=True, attack_success=None),
        ]
    )
    asr1 = k_metric(out, "asr@", 1)
    asr2 = k_metric(out, "asr@", 2)
    assert asr1.value == pytest.approx(1 / 3)  # 1/4 if the unknown trial were a failed attack
    assert asr2.value == pytest.approx(1 - comb(2, 2) / comb(3, 2))
    assert k_metric(out, "asr@", 4).excluded_tasks == 1
    assert out[0].attack_unknown == 1
    assert asr_at_k(3, 1, 2) == pytest.approx(2 / 3)


def _mixed_run(tmp_path: Path) -> Path:
    tasks = [
        TaskSpec("airline", "a0", [True, True, True, True], policy_violation=True),
        TaskSpec("airline", "a1", [True, False, "error", True]),
        TaskSpec(
            "retail",
            "r0",
            [False, False, True, True],
            attacks=[True, False, None, "-"],
            guard_errors=[False, True, False, False],
        ),
        TaskSpec("retail", "r1", [True, True, False, True], policy_violation=True),
    ]
    return write_run(tmp_path, "mixed", tasks)


def test_summarize_run_slices(tmp_path: Path) -> None:
    metrics = summarize_run(load_run(_mixed_run(tmp_path)))
    assert (metrics.max_k, metrics.max_trials) == (3, 4)  # tau2's rule: a1 has 3 evaluated trials
    assert metrics.simulated is True
    assert metrics.domains == ["airline", "retail"]
    overall = metrics.get("all")
    assert overall is not None
    assert (overall.tasks, overall.trials, overall.infra_errors) == (4, 15, 1)
    assert overall.error_rate == pytest.approx(1 / 16)
    # pass^1 = mean(1, 2/3, 1/2, 3/4); pass^4 is not given: a1 has only 3 evaluated trials, and
    # like tau2 the run's series stops at the smallest trial count (over the same 4 tasks).
    assert overall.value("pass^1") == pytest.approx((1 + 2 / 3 + 0.5 + 0.75) / 4)
    assert overall.value("pass^3") == pytest.approx((1 + 0 + 0 + 1 / 4) / 4)
    assert overall.value("pass^4") is None
    assert [kv.tasks for kv in overall.pass_hat] == [4, 4, 4]
    assert overall.value("pass@2") == pytest.approx((1 + 1 + (1 - 1 / 6) + 1) / 4)
    assert overall.avg_reward == pytest.approx(11 / 15)
    assert overall.guard_error_rate == pytest.approx(1 / 15)
    assert overall.attacked_tasks == 1 and overall.attack_unknown_trials == 1
    assert overall.value("asr@1") == pytest.approx(0.5)

    pv = metrics.get("policy_violation")
    mut = metrics.get("mutation")
    assert pv is not None and mut is not None
    assert (pv.tasks, mut.tasks) == (2, 2)
    assert pv.value("pass^1") == pytest.approx((1 + 0.75) / 2)
    assert mut.value("pass^1") == pytest.approx((2 / 3 + 0.5) / 2)
    assert mut.asr is not None and pv.asr is None

    airline = metrics.get("all", "airline")
    assert airline is not None and airline.tasks == 2
    assert airline.value("pass^1") == pytest.approx((1 + 2 / 3) / 2)
    assert metrics.get("mutation", "retail") is not None


def test_single_domain_run_has_no_per_domain_slices(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path, "one", [TaskSpec("retail", "0", [True, False])])
    metrics = summarize_run(load_run(run_dir))
    assert {sl.domain for sl in metrics.slices} == {None}
    assert metrics.max_k == 2


def test_summary_is_json_serialisable(tmp_path: Path) -> None:
    metrics = summarize_run(load_run(_mixed_run(tmp_path)))
    again = type(metrics).model_validate_json(metrics.model_dump_json())
    assert again == metrics


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("pass^4", "pass^4"), ("PASS@2", "pass@2"), ("asr@1", "asr@1"), ("avg_reward", "avg_reward")],
)
def test_parse_metric(name: str, canonical: str) -> None:
    assert parse_metric(name).name == canonical


@pytest.mark.parametrize("name", ["pass^x", "pass^0", "pass4", "reward", ""])
def test_parse_metric_rejects_and_lists_allowed(name: str) -> None:
    with pytest.raises(ValueError, match=r"allowed: pass\^K"):
        parse_metric(name)


def test_run_pass_hat_k_follows_tau2s_rule_and_is_monotone(tmp_path: Path) -> None:
    # Task b lost two trials to infrastructure errors. Averaging each k over the tasks that
    # have k trials made pass^k rise (k=1 over a and b, k=4 over a alone); tau2 stops at the
    # smallest trial count, so every k is over the same tasks.
    tasks = [
        TaskSpec("retail", "a", [True, True, True, True]),
        TaskSpec("retail", "b", [False, False, "error", "error"]),
        TaskSpec("retail", "c", [True, False, True, True]),
    ]
    metrics = summarize_run(load_run(write_run(tmp_path, "unequal", tasks)))
    overall = metrics.get("all")
    assert overall is not None and metrics.max_k == 2 and metrics.max_trials == 4
    values = [kv.value for kv in overall.pass_hat]
    assert [kv.k for kv in overall.pass_hat] == [1, 2] and [kv.tasks for kv in overall.pass_hat] == [3, 3]
    assert values == [pytest.approx((1 + 0 + 0.75) / 3), pytest.approx((1 + 0 + 0.5) / 3)]
    assert all(a >= b for a, b in zip(values, values[1:]))
    assert overall.value("pass^4") is None  # a floor on it reports "no data"
    from typer.testing import CliRunner

    from tauguard.cli.main import app

    shown = CliRunner().invoke(app, ["show", str(tmp_path / "unequal")])
    assert shown.exit_code == 0
    # (the summary fits 120 columns: a long line wraps, so words are compared)
    assert "k = 1..2, each k over the same 3 task(s); tasks have up to 4 evaluated trials" in " ".join(shown.stdout.split())
    header = next(line for line in shown.stdout.splitlines() if line.startswith("slice"))
    assert "pass^2" in header and "pass^3" not in header
    ci = next(line for line in shown.stdout.splitlines() if line.startswith("95% CI"))
    assert "pass^2 " in ci and "pass^3" not in ci  # the CI line follows the same rule (it printed pass^3, pass^4)


def test_process_rates_follow_policyguide_and_do_not_reward_blocks() -> None:
    from tauguard.analysis.metrics import slice_metrics
    from tauguard.analysis.task_table import outcomes_from_units
    from tauguard.runs.outcome_index import UnitOutcome

    def unit(trial: int, success: bool, process: tuple[bool, int, int] | None) -> UnitOutcome:
        return UnitOutcome("retail", "t", trial, True, False, False, success, float(success), False, None, False, process)

    checked = [unit(0, True, (True, 3, 3)), unit(1, True, (False, 3, 2)), unit(2, False, (False, 3, 1))]
    before = slice_metrics(outcomes_from_units(checked), 3)
    assert (before.step_tcr, before.trace_tcr) == (pytest.approx(5 / 6), 0.5)
    assert before.process_valid_rate == pytest.approx(1 / 3)  # all trials with a trace, the paper's rate
    # A guard that blocks: the two passing traces with no applicable check are not assessed, so
    # Trace-TCR does not rise (counted as compliant it would be 3/4), nor does Step-TCR.
    blocked = checked + [unit(3, True, (True, 0, 0)), unit(4, True, (True, 0, 0))]
    after = slice_metrics(outcomes_from_units(blocked), 5)
    assert (after.step_tcr, after.trace_tcr) == (before.step_tcr, before.trace_tcr)
    assert (after.process_unassessed, after.process_passed_traces) == (2, 4)
    none_applicable = slice_metrics(outcomes_from_units([unit(0, True, (True, 0, 0))]), 1)
    assert none_applicable.step_tcr is None and none_applicable.trace_tcr is None  # was 1.0


def test_tcr_definitions_reference_values_with_a_guard_blocked_trace() -> None:
    """Hand-computed Step-/Trace-TCR, process-valid rate and the counts behind them.

    PolicyGuide §4.7: Step-TCR = satisfied / applicable checks and Trace-TCR = traces satisfying
    all checks, both over outcome-passing traces; process-valid = reward 1 AND the rubric over
    all trials. tauguard's rule: a failed trace with a needed write a guard held stays in.
    """
    from tauguard.analysis.metrics import slice_metrics
    from tauguard.analysis.task_table import outcomes_from_units
    from tauguard.runs.outcome_index import UnitOutcome

    def unit(trial: int, success: bool, process: tuple[bool, int, int], blocked: int = 0) -> UnitOutcome:
        return UnitOutcome("retail", "t", trial, True, False, False, success, float(success), False, None, False,
                           process, blocked)

    units = [
        unit(0, True, (True, 4, 4)),  # passing, compliant
        unit(1, True, (False, 4, 3)),  # passing, one check failed
        unit(2, False, (False, 4, 2)),  # failed without a block: out of the TCRs (the paper's population)
        unit(3, False, (False, 3, 2), blocked=1),  # failed by a block: in, the blocked write unsatisfied
        unit(4, True, (True, 0, 0)),  # passing, nothing applicable: not assessed
    ]
    sl = slice_metrics(outcomes_from_units(units), 5)
    assert sl.step_tcr == pytest.approx((4 + 3 + 2) / (4 + 4 + 3))
    assert sl.trace_tcr == pytest.approx(1 / 3)
    assert sl.process_valid_rate == pytest.approx(2 / 5)  # trials 0 and 4
    assert (sl.process_passed_traces, sl.process_blocked_traces, sl.process_unassessed) == (3, 1, 1)
