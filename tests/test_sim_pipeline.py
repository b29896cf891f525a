"""The sim agent and user through tau2's real orchestrator, environments and evaluator."""

from __future__ import annotations

import pytest

from conftest import make_unit
from tauguard.faults.draw import apply_plan_faults, draw_trial_faults
from tauguard.faults.model import FaultProfile
from tauguard.runs.records import TrialRecord
from tauguard.sim.plan import gold_plan
from tauguard.execution.simulate import run_unit


@pytest.mark.slow
def test_react_sim_passes_every_base_task_of_every_domain(tau2):
    """With all faults off, react + sim passes all 278 base tasks (see README for quirks)."""
    from tauguard.execution.driver import execute

    units = [make_unit(domain, task.id) for domain in tau2.DOMAINS for task in tau2.load_tasks(domain, "base")]
    records = [TrialRecord.model_validate(raw) for raw in execute(units, workers=2, backend="loky")]
    assert len(records) == 278
    failed = [
        (r.domain, r.task_id, r.reward, r.termination_reason, (r.error or "")[:200])
        for r in records
        if r.error is not None or not r.success
    ]
    assert failed == []


def test_gold_plan_confirms_before_each_write_and_closes(tau2):
    task = next(t for t in tau2.load_tasks("airline", "base") if t.id == "1")
    plan = gold_plan("airline", task)
    kinds = [s.kind for s in plan]
    assert kinds[-1] == "close"
    for i, step in enumerate(plan):
        if step.is_write:
            assert plan[i - 1].kind == "confirm" and plan[i - 1].call == step.call


def test_telecom_user_side_actions_are_requested_in_words(tau2):
    task = tau2.load_tasks("telecom", "base")[0]
    plan = gold_plan("telecom", task)
    asked = [s.call.name for s in plan if s.kind == "ask_user"]
    gold_user = [a.name for a in task.evaluation_criteria.actions if a.requestor == "user"]
    assert asked == gold_user and asked


def _retail_write_task(tau2):
    return next(t for t in tau2.load_tasks("retail", "base") if t.id == "5")


def test_fault_draw_is_deterministic_and_strategy_free(tau2):
    task = _retail_write_task(tau2)
    plan = gold_plan("retail", task)
    profile = FaultProfile(name="p", rates={"skip_confirmation": 0.5, "skip_read": 0.5, "premature_stop": 0.2})
    draws = [draw_trial_faults(profile, "retail", task.id, trial, 11, plan) for trial in range(40)]
    again = [draw_trial_faults(profile, "retail", task.id, trial, 11, plan) for trial in range(40)]
    assert draws == again
    assert any(draws) and not all(draws)  # rates between 0 and 1 give a mix
    other_seed = [draw_trial_faults(profile, "retail", task.id, trial, 12, plan) for trial in range(40)]
    assert other_seed != draws
    # the record of a trial carries the same faults whatever the strategy
    faults = {}
    for strategy in ("react", "refuse-writes"):
        rec = TrialRecord.model_validate(
            run_unit(make_unit("retail", task.id, trial=3, seed=11, strategy=strategy, fault_profile=profile.model_dump()))
        )
        faults[strategy] = [(f.fault_id, f.fault_class) for f in rec.faults]
    assert faults["react"] == faults["refuse-writes"]


def test_plan_faults_remove_confirmation_reads_or_the_tail(tau2):
    task = _retail_write_task(tau2)
    plan = gold_plan("retail", task)
    write = next(s for s in plan if s.is_write)
    for kind, rates in (("skip_confirmation", {"skip_confirmation": 1.0}), ("premature_stop", {"premature_stop": 1.0}), ("skip_read", {"skip_read": 1.0})):
        faults = draw_trial_faults(FaultProfile(name=kind, rates=rates), "retail", task.id, 0, 1, plan)
        assert faults and faults[0].write_index == 0
        faulted = apply_plan_faults("retail", task.id, plan, faults[:1])
        confirm_of_write = [s for s in faulted if s.kind == "confirm" and s.call == write.call]
        if kind == "skip_confirmation":
            assert not confirm_of_write and any(s.call == write.call for s in faulted if s.kind == "call")
        elif kind == "premature_stop":
            assert not any(s.is_write for s in faulted) and faulted[-1].kind == "close"
        else:
            reads = [s.call.name for s in faulted if s.kind == "call" and s.tool_type == "READ"]
            gold_reads = [s.call.name for s in plan if s.kind == "call" and s.tool_type == "READ"]
            assert len(reads) < len(gold_reads)


@pytest.mark.parametrize("uptake", [1.0, 0.0])
def test_premature_stop_fails_the_task_and_is_recorded(tau2, uptake):
    task = _retail_write_task(tau2)
    profile = FaultProfile(name="stop", uptake=uptake, rates={"premature_stop": 1.0})
    rec = TrialRecord.model_validate(run_unit(make_unit("retail", task.id, fault_profile=profile.model_dump())))
    assert rec.success is False
    stop = [f for f in rec.faults if f.fault_id == "premature_stop"]
    assert stop and stop[0].applied and stop[0].fault_class == "W"


def test_sim_records_are_labelled_as_simulations(tau2):
    rec = TrialRecord.model_validate(run_unit(make_unit("telecom", tau2.load_tasks("telecom", "base")[0].id)))
    assert rec.simulated is True
    assert rec.usage["agent"].cost == 0.0
