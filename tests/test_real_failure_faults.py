"""Failure modes seen in real runs, as catalog faults: hand-off, wrong choice, bundled yes, unchecked claim."""

from __future__ import annotations

import pytest

from tauguard.faults.catalog import faults_by_id
from tauguard.faults.draw import TRANSFER_TOOL, apply_plan_faults, draw_trial_faults
from tauguard.faults.model import FaultProfile
from tauguard.sim import texts

pytestmark = pytest.mark.usefixtures("tau2")


def _profile(fault_id: str) -> FaultProfile:
    return FaultProfile(name=fault_id, uptake=1.0, block_transfer=0.0, rates={fault_id: 1.0})


def _planned(domain: str, task_id: str, fault_id: str):
    from tauguard.tau2_adapter import compat as t2
    from tauguard.sim.clean_plan import sim_plan

    task = next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)
    gold = sim_plan(domain, task)
    faults = draw_trial_faults(_profile(fault_id), domain, task_id, 0, 1, gold)
    return gold, apply_plan_faults(domain, task_id, gold, faults), faults


def _record(domain: str, task_id: str, fault_id: str, strategy: str = "react"):
    from conftest import make_unit

    from tauguard.execution.simulate import run_unit
    from tauguard.runs.records import TrialRecord

    profile = _profile(fault_id).model_dump()
    return TrialRecord.model_validate(run_unit(make_unit(domain, task_id, fault_profile=profile, strategy=strategy)))


def test_every_new_entry_names_its_source():
    for fid in ("premature_transfer", "bundle_confirmation", "airline.not_cheapest", "airline.stale_value", "airline.claim_unchecked",
                "telecom.claim_unchecked", "repeat_loop", "airline.invented_passenger"):
        assert "shared/trajectories" in faults_by_id()[fid].source, fid


def test_a_premature_transfer_hands_off_instead_of_writing():
    gold, plan, _ = _planned("retail", "0", "premature_transfer")
    calls = [s.call.name for s in plan if s.kind == "call" and s.call is not None]
    assert calls[-1] == TRANSFER_TOOL and plan[-1].infos == [texts.TRANSFER_NOTICE]
    assert sum(s.is_write for s in plan) < sum(s.is_write for s in gold)
    record = _record("retail", "0", "premature_transfer")
    assert not record.success and [(f.fault_class, f.applied) for f in record.faults] == [("W", True)]


def test_a_bundled_confirmation_folds_a_write_into_the_previous_statement():
    gold, plan, faults = _planned("airline", "7", "bundle_confirmation")
    assert len([s for s in plan if s.kind == "confirm"]) == len([s for s in gold if s.kind == "confirm"]) - len(faults)
    assert any(s.bundles_next for s in plan if s.kind == "confirm")
    record = _record("airline", "7", "bundle_confirmation")
    said = [m.get("content") or "" for m in record.simulation["messages"] if m.get("role") == "assistant"]
    assert any(texts.BUNDLED_REST in m for m in said)
    assert record.success  # tau2 scores the end state: only process compliance sees it


def test_an_unchecked_claim_drops_the_refuting_read_and_the_ledger_holds_the_write():
    gold, plan, _ = _planned("airline", "2", "airline.claim_unchecked")
    status = lambda p: [s for s in p if s.kind == "call" and s.call is not None and s.call.name == "get_flight_status"]  # noqa: E731
    assert status(gold) and not status(plan)
    record = _record("airline", "2", "airline.claim_unchecked", strategy="ledger")
    assert [(f.fault_class, f.intercepted) for f in record.faults] == [("T", True)]


def test_a_wrong_choice_books_a_dearer_flight_of_the_same_route_and_day():
    record = _record("airline", "7", "airline.not_cheapest")
    fault = next(f for f in record.faults if f.fault_id == "airline.not_cheapest")
    assert fault.applied and not record.success
    from tauguard.tau2_adapter import compat as t2

    task = next(t for t in t2.load_tasks("airline", "base") if t.id == "7")
    gold = next(a for a in task.evaluation_criteria.actions if a.name == fault.detail["faulty_call"]["name"])
    db = t2.task_environment("airline", task).tools.db
    cabin = gold.arguments["cabin"]
    pairs = zip(gold.arguments["flights"], fault.detail["faulty_call"]["arguments"]["flights"])
    changed = [(g, f) for g, f in pairs if g != f]
    assert len(changed) == 1
    g, f = changed[0]
    old, new = db.flights[g["flight_number"]], db.flights[f["flight_number"]]
    assert (old.origin, old.destination, g["date"]) == (new.origin, new.destination, f["date"])
    assert new.dates[f["date"]].prices[cabin] > old.dates[g["date"]].prices[cabin]


def test_a_stale_value_books_the_profile_date_of_birth_not_the_stated_one():
    from tauguard.tau2_adapter import compat as t2

    record = _record("airline", "35", "airline.stale_value")
    fault = next(f for f in record.faults if f.fault_id == "airline.stale_value")
    assert fault.applied and not record.success  # tau2 accepts the booking; the end state is wrong
    task = next(t for t in t2.load_tasks("airline", "base") if t.id == "35")
    profile_dob = t2.task_environment("airline", task).tools.db.users["aarav_ahmed_6699"].dob
    booked = fault.detail["faulty_call"]["arguments"]["passengers"]
    assert [p["dob"] for p in booked] == [profile_dob] != ["1985-04-04"]  # the user stated 1985-04-04


def test_a_wrong_choice_booking_takes_a_dearer_flight_and_pays_it_in_full():
    from tauguard.tau2_adapter import compat as t2
    from tauguard.strategy_api.conversation import ToolCallView
    from tauguard.faults.generators import FaultContext, generate

    task = next(t for t in t2.load_tasks("airline", "base") if t.id == "25")
    gold = next(a for a in task.evaluation_criteria.actions if a.name == "book_reservation")
    env = t2.task_environment("airline", task)
    call = generate("airline.not_cheapest", FaultContext("airline", task, ToolCallView(id="g", name=gold.name, arguments=dict(gold.arguments)), env, 0))
    assert call is not None
    paid = sum(p["amount"] for p in call.arguments["payment_methods"])
    assert paid > sum(p["amount"] for p in gold.arguments["payment_methods"])
    result = env.get_response(t2.ToolCall(id="x", name=call.name, arguments=call.arguments, requestor="assistant"))
    assert not result.error, result.content


def test_first_deviation_draw_takes_each_competing_fault_with_its_own_rate():
    from tauguard.tau2_adapter import compat as t2
    from tauguard.sim.clean_plan import sim_plan

    task = next(t for t in t2.load_tasks("airline", "base") if t.id == "2")  # one gold write
    plan = sim_plan("airline", task)
    rates = {"premature_stop": 0.5, "premature_transfer": 0.5}
    share = {}
    for draw in ("independent", "first_deviation"):
        profile = FaultProfile(name="x", uptake=1.0, block_transfer=0.0, rates=rates, draw=draw)
        drawn = [draw_trial_faults(profile, "airline", "2", trial, 1, plan) for trial in range(400)]
        assert all(len(f) <= 1 for f in drawn)  # one fault per write either way
        share[draw] = sum(f[0].fault_id == "premature_transfer" for f in drawn if f) / 400
    # independent: the later fault only gets the writes the earlier one left (about 0.25)
    assert 0.18 < share["independent"] < 0.32 and 0.42 < share["first_deviation"] < 0.58


def test_a_policy_following_agent_refuses_a_gold_conflict_write_and_transfers():
    from tauguard.tau2_adapter import compat as t2
    from tauguard.faults.draw import CONFLICT_REFUSAL
    from tauguard.sim.clean_plan import sim_plan

    task = next(t for t in t2.load_tasks("airline", "base") if t.id == "9")  # write 0 cancels a flown reservation
    gold = sim_plan("airline", task)
    refusing = FaultProfile(name="r", uptake=1.0, block_transfer=0.0, conflict_refusal=1.0)
    faults = draw_trial_faults(refusing, "airline", "9", 0, 1, gold)
    assert [(f.fault_id, f.write_index) for f in faults] == [(CONFLICT_REFUSAL, 0)]
    plan = apply_plan_faults("airline", "9", gold, faults)
    assert not any(s.is_write for s in plan) and plan[-1].infos == [texts.TRANSFER_NOTICE]
    # a rate of 0 draws nothing extra: the other faults of a profile are unchanged
    base = FaultProfile(name="b", uptake=1.0, block_transfer=0.0, rates={"premature_stop": 0.5})
    with_field = base.model_copy(update={"conflict_refusal": 0.0})
    for trial in range(20):
        assert draw_trial_faults(base, "airline", "9", trial, 1, gold) == draw_trial_faults(with_field, "airline", "9", trial, 1, gold)


def test_a_repeat_loop_makes_the_write_then_repeats_it_until_the_step_limit():
    from tauguard.faults.draw import LOOP_REPEATS

    gold, plan, faults = _planned("airline", "7", "repeat_loop")
    first = next(f.write_index for f in faults)
    writes = [s for s in plan if s.is_write]
    assert len(writes) == first + 1 + LOOP_REPEATS  # the writes up to the loop, then the copies
    assert {(s.call.name, str(s.call.arguments)) for s in writes[first:]} == {(writes[first].call.name, str(writes[first].call.arguments))}
    assert not any(s.kind == "close" for s in plan)
    record = _record("airline", "7", "repeat_loop")
    assert not record.success and record.simulation["termination_reason"] == "max_steps"
    assert [(f.fault_class, f.applied) for f in record.faults] == [("W", True)]


def test_an_invented_passenger_books_a_companion_under_made_up_details():
    from tauguard.tau2_adapter import compat as t2
    from tauguard.strategy_api.conversation import ToolCallView
    from tauguard.faults.domain.airline import INVENTED_DOBS
    from tauguard.faults.generators import FaultContext, generate

    task = next(t for t in t2.load_tasks("airline", "base") if t.id == "23")
    books = [a for a in task.evaluation_criteria.actions if a.name == "book_reservation"]
    env = t2.task_environment("airline", task)
    ctx = lambda a: FaultContext("airline", task, ToolCallView(id="g", name=a.name, arguments=dict(a.arguments)), env, 0)  # noqa: E731
    assert generate("airline.invented_passenger", ctx(books[0])) is None  # the user travels alone: nothing to invent
    call = generate("airline.invented_passenger", ctx(books[1]))
    assert call is not None
    (made_up,) = call.arguments["passengers"]
    user = env.tools.db.users[books[1].arguments["user_id"]]
    assert made_up["first_name"] == books[1].arguments["passengers"][0]["first_name"]
    assert made_up["last_name"] == user.name.last_name and made_up["dob"] in INVENTED_DOBS
    # an invented date: nobody in the airline's records has it
    known = {u.dob for u in env.tools.db.users.values()} | {p.dob for u in env.tools.db.users.values() for p in u.saved_passengers}
    assert not set(INVENTED_DOBS) & known


def test_a_repeat_loop_never_repeats_an_airline_cancellation():
    # τ²'s cancel_reservation appends a refund per payment-history entry (refunds included): a
    # repeated cancellation doubles the history each call and a loop to max_steps never ends.
    loop = faults_by_id()["repeat_loop"]
    assert not loop.applies_to("airline", "cancel_reservation")
    assert loop.applies_to("airline", "update_reservation_flights") and loop.applies_to("retail", "cancel_pending_order")
