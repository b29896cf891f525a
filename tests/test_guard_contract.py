"""The hook contract end to end, with the test-only block-tool strategy."""

from __future__ import annotations

from conftest import make_unit
from tauguard.faults.model import FaultProfile
from tauguard.runs.records import TrialRecord
from tauguard.execution.simulate import run_unit


def _cancel_task(tau2):
    for task in tau2.load_tasks("airline", "base"):
        names = [a.name for a in task.evaluation_criteria.actions or []]
        if names.count("cancel_reservation") == 1 and len(names) <= 3:
            return task
    raise AssertionError("no airline task with one cancellation")


def _tool_calls(rec: TrialRecord) -> list[str]:
    names = []
    for m in rec.simulation["messages"]:
        for tc in m.get("tool_calls") or []:
            names.append(tc["name"])
    return names


def test_blocked_call_never_reaches_the_environment(tau2):
    task = _cancel_task(tau2)
    rec = TrialRecord.model_validate(
        run_unit(make_unit("airline", task.id, strategy="block-tool", strategy_options={"tool": "cancel_reservation"}))
    )
    assert "cancel_reservation" not in _tool_calls(rec)  # held, so not in tau2's trajectory
    assert rec.success is False  # the gold cancellation did not happen: the DB check fails
    gates = [e for e in rec.guard_events if e.hook == "before_write"]
    assert gates and all(e.verdict.value == "BLOCK" and e.rule_id == "test.block_tool" for e in gates)
    assert all(e.tool_call.name == "cancel_reservation" for e in gates)
    # the inner agent received the decision and told the user it cannot do it
    texts = [m.get("content") or "" for m in rec.simulation["messages"] if m["role"] == "assistant"]
    assert any("cannot perform cancel_reservation" in t for t in texts)
    # after_tool observations that decided nothing are not recorded (records stay small)
    assert not [e for e in rec.guard_events if e.hook == "after_tool"]


def test_other_tools_pass_and_react_has_no_events(tau2):
    task = _cancel_task(tau2)
    rec = TrialRecord.model_validate(
        run_unit(make_unit("airline", task.id, strategy="block-tool", strategy_options={"tool": "book_reservation"}))
    )
    assert rec.success is True
    assert {e.verdict.value for e in rec.guard_events if e.hook == "before_write"} == {"ALLOW"}
    react = TrialRecord.model_validate(run_unit(make_unit("airline", task.id)))
    assert react.guard_events == []


def test_retries_are_bounded_without_uptake(tau2):
    task = _cancel_task(tau2)
    profile = FaultProfile(name="stubborn", uptake=0.0)
    rec = TrialRecord.model_validate(
        run_unit(make_unit("airline", task.id, strategy="block-tool", strategy_options={"tool": "cancel_reservation"},
                           fault_profile=profile.model_dump(), max_guard_retries=2))
    )
    gates = [e for e in rec.guard_events if e.hook == "before_write"]
    assert len(gates) == 3  # first try + 2 retries
    assert [e.hook for e in rec.guard_events].count("retry_exhausted") == 1
    assert rec.termination_reason in ("user_stop", "agent_stop")


def test_refuse_writes_blocks_every_write_and_keeps_inaction_tasks(tau2):
    tasks = tau2.load_tasks("airline", "base")[:6]
    for task in tasks:
        rec = TrialRecord.model_validate(run_unit(make_unit("airline", task.id, strategy="refuse-writes")))
        assert rec.success is rec.policy_violation_task, task.id
