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
    from tauguard import tau2compat as t2
    from tauguard.sim.clean_plan import sim_plan

    task = next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)
    gold = sim_plan(domain, task)
    faults = draw_trial_faults(_profile(fault_id), domain, task_id, 0, 1, gold)
    return gold, apply_plan_faults(domain, task_id, gold, faults), faults


def _record(domain: str, task_id: str, fault_id: str, strategy: str = "react"):
    from conftest import make_unit

    from tauguard.execution.simulate import run_unit
    from tauguard.records import TrialRecord

    profile = _profile(fault_id).model_dump()
    return TrialRecord.model_validate(run_unit(make_unit(domain, task_id, fault_profile=profile, strategy=strategy)))


def test_every_new_entry_names_its_source():
    for fid in ("premature_transfer", "bundle_confirmation", "airline.not_cheapest", "airline.claim_unchecked", "telecom.claim_unchecked"):
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
    from tauguard import tau2compat as t2

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
