"""`tauguard power`: simulated power against an exact binomial reference, the plan, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from tauguard.testing.synthetic_runs import TaskSpec, random_tasks, write_run
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.analysis.metrics import TaskOutcome
from tauguard.analysis.power import PowerError, _Model, _power, plan_power

runner = CliRunner()


def _exact_power(tasks: int, r: float, confidence: float = 0.95) -> float:
    # Every pilot task always passes and the candidate breaks each with probability r: the
    # number of broken tasks B is Binomial(tasks, r), the differences are B times -1, and
    # compare's adjusted CI detects a loss when its upper end is below 0 and B >= 6.
    z = sps.norm.ppf(0.5 + confidence / 2)
    total = 0.0
    for b in range(tasks + 1):
        centre = -b / (tasks + 2)
        var = (b + 2) / (tasks + 2) - centre**2
        if b >= 6 and centre + z * np.sqrt(var / (tasks + 2)) < 0:
            total += sps.binom.pmf(b, tasks, r)
    return total


def _pilot(n_tasks: int, successes: int, trials: int) -> list[TaskOutcome]:
    return [
        TaskOutcome(domain="retail", task_id=str(i), policy_violation_task=False, trials=trials, successes=successes)
        for i in range(n_tasks)
    ]


@pytest.mark.parametrize("tasks", [40, 90])
def test_simulated_power_matches_the_exact_binomial_power(tasks: int) -> None:
    model = _Model(np.ones(30), None, 1)
    sims = 20_000
    got = _power(model, -0.1, tasks, 1, simulations=sims, confidence=0.95, rng=np.random.default_rng(1))
    exact = _exact_power(tasks, 0.1)
    assert got == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / sims) + 1e-3)


def test_plan_finds_the_fewest_tasks_and_the_run_mde() -> None:
    plan = plan_power(_pilot(30, 1, 1), run_id="pilot", simulated=True, k=1, delta=-0.1, simulations=4000, seed=3)
    first = plan.designs[0]
    assert first.trials == 1 and first.power >= 0.8
    # The exact power crosses 80 % near the tasks the plan found (simulation noise: a few tasks).
    assert _exact_power(first.tasks + 8, 0.1) >= 0.8 > _exact_power(first.tasks - 8, 0.1)
    assert [d.trials for d in plan.designs] == [1, 2, 4]
    # The pilot as it stands (30 tasks): too small for Δ = -0.1; its MDE is larger.
    assert plan.current.tasks == 30 and plan.current.power < 0.8
    assert plan.mde is not None and 0.1 < plan.mde <= 1.0
    assert _exact_power(30, plan.mde * 1.1) >= 0.75


def test_plan_errors_are_one_line() -> None:
    pilot = _pilot(10, 1, 1)
    with pytest.raises(PowerError, match="not reachable.*at most \\+0.000"):
        plan_power(pilot, run_id="p", simulated=True, k=1, delta=0.1)
    with pytest.raises(PowerError, match="give --delta"):
        plan_power(pilot, run_id="p", simulated=True, k=1, delta=None)
    with pytest.raises(PowerError, match="invalid --delta 0"):
        plan_power(pilot, run_id="p", simulated=True, k=1, delta=0.0)


def test_power_cli_with_a_second_run(tmp_path: Path) -> None:
    base = write_run(tmp_path, "base", random_tasks({"retail": 40}, 4, 0.6, seed=1))
    cand = write_run(tmp_path, "cand", random_tasks({"retail": 40}, 4, 0.8, seed=2), strategy="guard")
    res = runner.invoke(app, ["power", str(base), "--vs", str(cand), "--k", "1", "--simulations", "500", "--format", "json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)
    assert plan["simulated"] is True and plan["metric"] == "pass^1" and plan["delta"] > 0
    assert plan["designs"] and all(d["power"] >= 0.8 for d in plan["designs"])
    table = runner.invoke(app, ["power", str(base), "--delta", "-0.05", "--k", "2", "--simulations", "300"])
    assert table.exit_code == 0 and table.stdout.startswith("SIMULATION")
    assert "minimum detectable effect: |Δpass^2| ≥" in table.stdout and "tasks needed" in table.stdout
    bad = runner.invoke(app, ["power", str(base), "--delta", "1.5"])
    assert bad.exit_code == 2 and bad.stderr.strip().splitlines() == [bad.stderr.strip()]
    assert bad.stderr.startswith("error: invalid --delta 1.5")
    one = write_run(tmp_path, "one", [TaskSpec("retail", "0", ["error"])])
    empty = runner.invoke(app, ["power", str(one), "--delta", "-0.1"])
    assert empty.exit_code == 2 and "no task with an evaluated trial" in empty.stderr


def test_the_plan_states_the_pilots_pass_hat_k_beside_the_models() -> None:
    from math import comb

    # 2 of 4 trials on every task: τ²'s pass^2 is C(2,2)/C(4,2) = 1/6; the model's (c/n)^2 is 1/4.
    plan = plan_power(_pilot(20, 2, 4), run_id="p", simulated=True, k=2, delta=-0.05, simulations=200)
    assert plan.pilot_value == pytest.approx(comb(2, 2) / comb(4, 2)) and plan.baseline_value == pytest.approx(0.25)
    from tauguard.cli.power import render_power

    assert "pilot pass^2 0.167, model 0.250 from per-task rates (c/n)^2" in render_power(plan, "table")
    # a second run whose change goes the other way says so
    with pytest.raises(PowerError, match="per-task change goes the other way"):
        plan_power(_pilot(20, 2, 4), run_id="p", simulated=True, k=2, delta=0.05, versus=_pilot(20, 1, 4), vs_run_id="w")


def test_a_plan_beyond_the_domains_tasks_says_so_and_offers_trials(tmp_path: Path) -> None:
    # retail has 114 base tasks: detecting -0.05 at pass^2 from 40 noisy tasks needs hundreds.
    base = write_run(tmp_path, "base", random_tasks({"retail": 40}, 2, 0.7, seed=1))
    res = runner.invoke(app, ["power", str(base), "--delta", "-0.05", "--k", "2", "--simulations", "200", "--format", "json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)
    assert plan["available_tasks"] == 114
    over = [d for d in plan["designs"] if d["tasks"] > 114]
    assert over and all(
        f"{d['trials']} trials per task: {d['tasks']} tasks needed, more than the 114 the domains have" in plan["notes"]
        for d in over
    )
    assert any(n.startswith("within the domains' 114 tasks: ") for n in plan["notes"])


def test_gate_design_is_the_check_rule_by_simulation() -> None:
    from tauguard.analysis.metrics import metric_def
    from tauguard.analysis.power import gate_design

    pass_hat = metric_def("pass^")
    # Steady tasks (rates 0 or 1): every unchanged difference is 0 and the adjusted CI is
    # ±2.77 / (tasks + 2): inside 0.05 from 54 tasks on, whatever the simulation draws.
    steady = [1.0] * 40 + [0.0] * 20
    assert gate_design(steady, pass_hat, 2, tasks=60, trials=2, margin=0.05).pass_probability == 1.0
    small = gate_design(steady[:30], pass_hat, 2, tasks=30, trials=2, margin=0.05, available_tasks=114)
    assert small.pass_probability == 0.0 and not small.feasible
    assert small.needed is not None and small.needed.tasks == 54 and small.needed.trials == 2
    assert abs(small.smallest_margin - 1.959963985 * 2**0.5 / 32) < 1e-6  # z·sqrt(2)/(m+2)
    assert small.advice().startswith("54 tasks × 2 trials would")
    # A 50-task domain cannot hold 54 tasks: no design within it reaches the target.
    capped = gate_design(steady[:30], pass_hat, 2, tasks=30, trials=2, margin=0.05, available_tasks=50)
    assert capped.within_tasks is None and "no design within the domains' 50 tasks" in capped.advice()


def test_power_margin_says_whether_check_can_pass(tmp_path: Path) -> None:
    base = write_run(tmp_path, "base", random_tasks({"retail": 20}, 2, 0.7, seed=1))
    res = runner.invoke(app, ["power", str(base), "--delta", "-0.2", "--k", "2", "--simulations", "200", "--margin", "0.05"])
    assert res.exit_code == 0, res.output
    assert "gate design: `check --margin 0.05` on pass^2 cannot pass an unchanged strategy at 20 tasks × 2 trials" in res.stdout
