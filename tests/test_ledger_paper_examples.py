"""LedgerAgent's two running examples (arXiv:2606.20529, appendices B and C) as acceptance tests.

Each replays the task with ``tauguard.sim.plan_replay.gate_after_prefix`` (real environment, the
live wrapper's observation hooks) and gates a hand-written call.
"""

from __future__ import annotations

import pytest

from tauguard_strategies.ledger import LedgerSession
from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import Verdict
from tauguard.sim.plan_replay import decision_points, gate_after_prefix, plan_events
from tauguard.sim.plan import gold_plan


def _task(domain: str, task_id: str) -> t2.Task:
    return next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)


def _session(domain: str) -> LedgerSession:
    return LedgerSession(domain, t2.tool_types(domain)[0])


def _calls(*calls: tuple[str, dict]) -> list[ConversationEvent]:
    return [ConversationEvent(kind="agent_tool_call", tool_call=ToolCallView(id=f"r{i}", name=n, arguments=a))
            for i, (n, a) in enumerate(calls)]


CANCEL_28 = ToolCallView(id="w", name="cancel_reservation", arguments={"reservation_id": "SI5UKW"})


@pytest.fixture(scope="module")
def task28() -> t2.Task:
    task = _task("airline", "28")
    # The gold plan of task 28 has no action at all: declining is the correct outcome.
    assert gold_plan("airline", task)[-1].kind == "close" and not list(decision_points("airline", task))
    return task


def test_airline_28_cancellation_without_basis_is_blocked(task28: t2.Task) -> None:
    opening = plan_events(task28, [])  # greeting + the user's request
    prefix = opening + _calls(
        ("get_user_details", {"user_id": "amelia_rossi_1297"}),
        ("get_reservation_details", {"reservation_id": "SI5UKW"}),
        ("get_flight_status", {"flight_number": "HAT062", "date": "2024-05-16"}),
        ("get_flight_status", {"flight_number": "HAT284", "date": "2024-05-17"}),
    )
    decision, replay = gate_after_prefix(_session("airline"), "airline", task28, prefix, CANCEL_28)
    assert replay.failures == []
    assert decision.verdict == Verdict.BLOCK
    assert decision.rule_id == "airline.cancel_requires_basis"  # the paper's cancel_requires_basis
    assert "The booking was made within the last 24 hrs" in decision.reason
    assert decision.evidence["ledger"] == {
        "reservations/SI5UKW/created_at": "2024-05-11T00:08:57",
        "reservations/SI5UKW/cabin": "basic_economy",
        "reservations/SI5UKW/insurance": "no",
        "policy_now": "2024-05-15T15:00:00",
        "flight_dates/HAT062/2024-05-16/status": "available",
        "flight_dates/HAT284/2024-05-17/status": "available",
    }
    # Ownership was checked first and held, as in the paper's trace.
    assert decision.evidence["checked"] == ["airline.reservation_owner", "airline.cancel_not_flown"]


def test_airline_28_without_flight_status_asks_for_it(task28: t2.Task) -> None:
    prefix = plan_events(task28, []) + _calls(("get_user_details", {"user_id": "amelia_rossi_1297"}),
                                              ("get_reservation_details", {"reservation_id": "SI5UKW"}))
    decision, _ = gate_after_prefix(_session("airline"), "airline", task28, prefix, CANCEL_28)
    assert decision.verdict == Verdict.VERIFY and decision.rule_id == "airline.cancel_requires_basis"
    assert [r["tool"] for r in decision.evidence["required_reads"]] == ["get_flight_status", "get_flight_status"]


@pytest.fixture(scope="module")
def point83() -> tuple[t2.Task, list[ConversationEvent], ToolCallView]:
    task = _task("retail", "83")
    (point,) = list(decision_points("retail", task))  # the gold return to the gift card
    assert point.call.arguments["payment_method_id"] == "gift_card_7250692"
    # The gold plan holds no read; the agent of the paper's trace authenticated by name + zip
    # and read the user and the order before proposing the refund.
    reads = _calls(("find_user_id_by_name_zip", {"first_name": "Chen", "last_name": "Silva", "zip": "46281"}),
                   ("get_user_details", {"user_id": "chen_silva_7485"}),
                   ("get_order_details", {"order_id": "#W9571698"}))
    return task, point.prefix + reads, point.call


def test_retail_83_refund_to_card_outside_payment_history_is_revised(point83: tuple) -> None:
    task, prefix, gold_call = point83
    mastercard = gold_call.model_copy(update={"arguments": dict(gold_call.arguments, payment_method_id="credit_card_1565124")})
    decision, replay = gate_after_prefix(_session("retail"), "retail", task, prefix, mastercard)
    assert replay.failures == []
    assert decision.verdict == Verdict.REVISE and decision.rule_id == "retail.refund_destination"
    assert "absent from the order's payment history" in decision.reason and "mastercard" in decision.reason
    assert decision.revised_arguments == dict(gold_call.arguments)  # the original gift card
    # Ownership, delivery and item membership held; only the refund provenance failed.
    assert decision.evidence["checked"] == ["retail.authenticate", "retail.one_user", "retail.return_delivered", "retail.return_items"]


def test_retail_83_refund_to_original_gift_card_is_allowed(point83: tuple) -> None:
    task, prefix, gold_call = point83
    decision, _ = gate_after_prefix(_session("retail"), "retail", task, prefix, gold_call)
    assert decision.verdict == Verdict.ALLOW, decision.reason
