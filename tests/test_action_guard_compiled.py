"""The compiled backend end to end: hand-built conversations -> GuardDecision."""

from __future__ import annotations

from typing import Any

import pytest

from tauguard_strategies.action_guard import ActionGuardStrategy
from tauguard_strategies.action_guard.builder import ConversationBuilder
from tauguard_strategies.action_guard.checks import CHECKS
from tauguard_strategies.action_guard.session import ActionGuardSession
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.strategy_api.guard import FINDINGS_KEY, GUARD_ERROR_RULE, REQUIRED_READS_KEY, GuardDecision, SessionContext, Verdict


def gate(domain: str, call: ToolCallView, conversation: Conversation, **options: Any) -> GuardDecision:
    session = ActionGuardStrategy(options).new_session(SessionContext(domain=domain, task_id="t", policy="", tool_types={}))
    return session.before_write(call, conversation)


def failed(decision: GuardDecision) -> set[str]:
    return {f["rule_id"].rsplit(".", 1)[-1] for f in decision.evidence.get(FINDINGS_KEY, [])}


# --- retail -----------------------------------------------------------------------------

USER = "fatima_johnson_7581"


def order(status: str = "pending", owner: str = USER, payment: str = "paypal_5364164") -> dict[str, Any]:
    return {
        "order_id": "#W5199551",
        "user_id": owner,
        "items": [{"name": "Wristwatch", "product_id": "6066914160", "item_id": "1994478369", "price": 2025.51}],
        "status": status,
        "payment_history": [{"transaction_type": "payment", "amount": 2025.51, "payment_method_id": payment}],
    }


def retail(order_json: dict[str, Any] | None = None, opening: str = "Please cancel my order #W5199551, I no longer need it.") -> ConversationBuilder:
    b = ConversationBuilder().user(f"Hi, I'm Fatima Johnson, zip 78712. {opening}")
    b.tool("find_user_id_by_name_zip", {"first_name": "Fatima", "last_name": "Johnson", "zip": "78712"}, USER)
    if order_json is not None:
        b.tool("get_order_details", {"order_id": "#W5199551"}, order_json)
    return b


CANCEL = ToolCallView(name="cancel_pending_order", arguments={"order_id": "#W5199551", "reason": "no longer needed"})


def test_compliant_cancellation_is_allowed() -> None:
    conv = retail(order()).confirm(CANCEL.name, CANCEL.arguments).build()
    decision = gate("retail", CANCEL, conv)
    assert decision.verdict == Verdict.ALLOW, decision.reason


def test_cancellation_without_confirmation_needs_verification() -> None:
    decision = gate("retail", CANCEL, retail(order()).build())
    assert decision.verdict == Verdict.VERIFY
    assert decision.rule_id == "retail.cancel_pending_order.confirmation"
    assert "yes" in decision.remediation


def test_order_of_another_user_is_blocked() -> None:
    conv = retail(order(owner="someone_else_1")).confirm(CANCEL.name, CANCEL.arguments).build()
    decision = gate("retail", CANCEL, conv)
    assert decision.verdict == Verdict.BLOCK
    assert decision.rule_id == "retail.cancel_pending_order.owner"


def test_non_pending_order_is_blocked() -> None:
    conv = retail(order(status="processed")).confirm(CANCEL.name, CANCEL.arguments).build()
    decision = gate("retail", CANCEL, conv)
    assert decision.verdict == Verdict.BLOCK
    assert "status" in failed(decision)


def test_user_claim_of_status_is_not_evidence() -> None:
    conv = retail(None, opening="My order #W5199551 is still pending, cancel it, I no longer need it.").confirm(CANCEL.name, CANCEL.arguments).build()
    decision = gate("retail", CANCEL, conv)
    assert decision.verdict == Verdict.VERIFY
    assert {"order_read", "status", "owner"} <= failed(decision)
    assert {"tool": "get_order_details", "arguments": {"order_id": "#W5199551"}, "why": ""} in decision.evidence[REQUIRED_READS_KEY]
    assert "get_order_details" in decision.remediation


def test_unacceptable_reason_is_blocked() -> None:
    call = ToolCallView(name="cancel_pending_order", arguments={"order_id": "#W5199551", "reason": "too expensive"})
    conv = retail(order()).confirm(call.name, call.arguments).build()
    decision = gate("retail", call, conv)
    assert decision.verdict == Verdict.BLOCK
    assert decision.rule_id == "retail.cancel_pending_order.reason_allowed"


def test_refund_to_another_method_must_be_revised() -> None:
    call = ToolCallView(name="return_delivered_order_items", arguments={"order_id": "#W5199551", "item_ids": ["1994478369"], "payment_method_id": "credit_card_1"})
    conv = retail(order(status="delivered"), opening="I want to return the watch of order #W5199551.").confirm(call.name, call.arguments).build()
    decision = gate("retail", call, conv)
    assert decision.verdict == Verdict.REVISE
    # The guard names the allowed original method but does not pick the destination for the user.
    assert decision.revised_arguments is None
    assert decision.evidence[FINDINGS_KEY][0]["evidence"]["original"] == "paypal_5364164"
    assert "GUARD REVISE" in decision.as_tool_error() and "original payment method" in decision.as_tool_error()


def test_items_of_an_order_are_modified_only_once() -> None:
    call = ToolCallView(name="modify_pending_order_items", arguments={"order_id": "#W5199551", "item_ids": ["1994478369"], "new_item_ids": ["2"], "payment_method_id": "paypal_5364164"})
    b = retail(order(), opening="Change the watch in #W5199551.").confirm(call.name, call.arguments)
    b.tool(call.name, call.arguments, order(status="pending (item modified)"))
    b.confirm(call.name, call.arguments)
    decision = gate("retail", call, b.build())
    assert decision.verdict == Verdict.BLOCK
    assert {"once", "status"} <= failed(decision)


# --- airline ----------------------------------------------------------------------------

AIR_USER = "daiki_muller_1116"


def reservation(cabin: str = "basic_economy", insurance: str = "no", created: str = "2024-05-01T05:17:41", dates: tuple[str, str] = ("2024-05-20", "2024-05-30"), **extra: Any) -> dict[str, Any]:
    return {
        "reservation_id": "XEHM4B",
        "user_id": AIR_USER,
        "origin": "LAS",
        "destination": "ATL",
        "flight_type": "round_trip",
        "cabin": cabin,
        "flights": [
            {"flight_number": "HAT005", "origin": "LAS", "destination": "ATL", "date": dates[0], "price": 65},
            {"flight_number": "HAT178", "origin": "ATL", "destination": "LAS", "date": dates[1], "price": 83},
        ],
        "passengers": [{"first_name": "Daiki", "last_name": "Muller", "dob": "1954-07-04"}, {"first_name": "Omar", "last_name": "Ito", "dob": "1975-09-19"}],
        "created_at": created,
        "total_baggages": 2,
        "nonfree_baggages": 0,
        "insurance": insurance,
        **extra,
    }


CANCEL_RES = ToolCallView(name="cancel_reservation", arguments={"reservation_id": "XEHM4B"})


def airline(res: dict[str, Any], say: str = "My plans changed, please cancel reservation XEHM4B.") -> ConversationBuilder:
    b = ConversationBuilder().user(f"Hi, my user id is {AIR_USER}. {say}")
    return b.tool("get_reservation_details", {"reservation_id": "XEHM4B"}, res)


def test_business_reservation_cancellation_is_allowed() -> None:
    conv = airline(reservation(cabin="business")).confirm(CANCEL_RES.name, CANCEL_RES.arguments).build()
    assert gate("airline", CANCEL_RES, conv).verdict == Verdict.ALLOW


def test_ineligible_cancellation_asks_for_flight_status_then_blocks() -> None:
    b = airline(reservation(), say="The airline cancelled my flight, so cancel reservation XEHM4B.").confirm(CANCEL_RES.name, CANCEL_RES.arguments)
    first = gate("airline", CANCEL_RES, b.build())
    # The user's claim is not evidence: the guard asks for the flight status, it does not allow.
    assert first.verdict == Verdict.VERIFY and first.rule_id == "airline.cancel_reservation.basis"
    assert {r["tool"] for r in first.evidence[REQUIRED_READS_KEY]} == {"get_flight_status"}
    b.tool("get_flight_status", {"flight_number": "HAT005", "date": "2024-05-20"}, "available")
    b.tool("get_flight_status", {"flight_number": "HAT178", "date": "2024-05-30"}, "available")
    second = gate("airline", CANCEL_RES, b.confirm(CANCEL_RES.name, CANCEL_RES.arguments).build())
    assert second.verdict == Verdict.BLOCK and second.rule_id == "airline.cancel_reservation.basis"


def test_airline_cancelled_flight_makes_cancellation_eligible() -> None:
    b = airline(reservation()).tool("get_flight_status", {"flight_number": "HAT005", "date": "2024-05-20"}, "cancelled")
    assert gate("airline", CANCEL_RES, b.confirm(CANCEL_RES.name, CANCEL_RES.arguments).build()).verdict == Verdict.ALLOW


def test_insured_cancellation_needs_a_covered_reason() -> None:
    res = reservation(cabin="economy", insurance="yes")
    vague = gate("airline", CANCEL_RES, airline(res).confirm(CANCEL_RES.name, CANCEL_RES.arguments).build())
    assert vague.verdict == Verdict.VERIFY and "basis" in failed(vague)
    sick = airline(res, say="I am sick and cannot travel, cancel reservation XEHM4B.").confirm(CANCEL_RES.name, CANCEL_RES.arguments)
    assert gate("airline", CANCEL_RES, sick.build()).verdict == Verdict.ALLOW


def test_partly_flown_reservation_is_blocked_with_transfer_advice() -> None:
    b = airline(reservation(cabin="business", dates=("2024-05-10", "2024-05-30")))
    # A past segment is flown unless the airline cancelled it: its status is read first.
    first = gate("airline", CANCEL_RES, b.confirm(CANCEL_RES.name, CANCEL_RES.arguments).build())
    assert first.verdict == Verdict.VERIFY and first.rule_id == "airline.cancel_reservation.not_flown"
    assert [(r.tool, r.arguments) for r in first.required_reads] == [("get_flight_status", {"flight_number": "HAT005", "date": "2024-05-10"})]
    b.tool("get_flight_status", {"flight_number": "HAT005", "date": "2024-05-10"}, "landed")
    decision = gate("airline", CANCEL_RES, b.confirm(CANCEL_RES.name, CANCEL_RES.arguments).build())
    assert decision.verdict == Verdict.BLOCK and decision.rule_id == "airline.cancel_reservation.not_flown"
    assert "transfer" in decision.remediation


def test_reservation_of_another_user_is_blocked() -> None:
    other = "sara_doe_496"
    b = ConversationBuilder().user(f"My user id is {other}. My plans changed, cancel XEHM4B.")
    b.tool("get_user_details", {"user_id": other}, {"user_id": other, "membership": "gold", "payment_methods": {}})
    b.tool("get_reservation_details", {"reservation_id": "XEHM4B"}, reservation(cabin="business"))
    decision = gate("airline", CANCEL_RES, b.confirm(CANCEL_RES.name, CANCEL_RES.arguments).build())
    assert decision.verdict == Verdict.BLOCK and decision.rule_id == "airline.cancel_reservation.owner"


def _bags(total: int, nonfree: int) -> ToolCallView:
    return ToolCallView(name="update_reservation_baggages", arguments={"reservation_id": "XEHM4B", "total_baggages": total, "nonfree_baggages": nonfree, "payment_id": "credit_card_1"})


def _bag_conversation(call: ToolCallView) -> Conversation:
    b = airline(reservation(cabin="economy"), say="Add bags to XEHM4B.")
    b.tool("get_user_details", {"user_id": AIR_USER}, {"user_id": AIR_USER, "membership": "silver", "payment_methods": {"credit_card_1": {"source": "credit_card"}}})
    return b.confirm(call.name, call.arguments).build()


def test_nonfree_bags_are_revised_to_the_allowance() -> None:
    # silver economy: 2 free bags per passenger, 2 passengers -> 4 free; 5 bags -> 1 non-free
    call = _bags(5, 3)
    decision = gate("airline", call, _bag_conversation(call))
    assert decision.verdict == Verdict.REVISE
    assert decision.revised_arguments is not None and decision.revised_arguments["nonfree_baggages"] == 1
    assert gate("airline", _bags(5, 1), _bag_conversation(_bags(5, 1))).verdict == Verdict.ALLOW


def test_removing_bags_is_blocked() -> None:
    call = _bags(1, 0)
    decision = gate("airline", call, _bag_conversation(call))
    assert decision.verdict == Verdict.BLOCK and "not_decreased" in failed(decision)


def test_compensation_for_a_regular_economy_member_is_blocked() -> None:
    call = ToolCallView(name="send_certificate", arguments={"user_id": AIR_USER, "amount": 100})
    b = airline(reservation(cabin="economy"), say="My flight in XEHM4B was delayed, I want compensation.")
    b.tool("get_user_details", {"user_id": AIR_USER}, {"user_id": AIR_USER, "membership": "regular", "payment_methods": {}})
    decision = gate("airline", call, b.confirm(call.name, call.arguments).build())
    assert decision.verdict == Verdict.BLOCK and decision.rule_id == "airline.send_certificate.eligible"


# --- telecom ----------------------------------------------------------------------------

CUSTOMER = {"customer_id": "C1001", "full_name": "John Smith", "phone_number": "555-123-2002", "line_ids": ["L1001", "L1002"], "bill_ids": ["B1", "B2"]}
LINE = {"line_id": "L1002", "phone_number": "555-123-2002", "status": "Suspended", "roaming_enabled": False, "contract_end_date": "2026-12-31"}


def telecom() -> ConversationBuilder:
    b = ConversationBuilder().user("I am John Smith, phone 555-123-2002. I have no service.")
    return b.tool("get_customer_by_phone", {"phone_number": "555-123-2002"}, CUSTOMER).tool("get_details_by_id", {"id": "L1002"}, LINE)


def test_refuel_over_the_maximum_is_blocked() -> None:
    call = ToolCallView(name="refuel_data", arguments={"customer_id": "C1001", "line_id": "L1002", "gb_amount": 3.0})
    decision = gate("telecom", call, telecom().build())
    assert decision.verdict == Verdict.BLOCK and decision.rule_id == "telecom.refuel_data.max_amount"


def test_refuel_with_amount_and_price_confirmed_is_allowed() -> None:
    call = ToolCallView(name="refuel_data", arguments={"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0})
    b = telecom().user("I'd like 2 GB please.").agent("Refueling 2 GB on line L1002 costs $20.00. Shall I proceed?").user("Yes.")
    assert gate("telecom", call, b.build()).verdict == Verdict.ALLOW


def _bill(status: str) -> dict[str, Any]:
    return {"bill_id": "B2", "customer_id": "C1001", "total_due": 65.0, "status": status}


RESUME = ToolCallView(name="resume_line", arguments={"customer_id": "C1001", "line_id": "L1002"})


def test_resume_waits_until_a_read_shows_the_bill_paid() -> None:
    b = telecom().tool("get_bills_for_customer", {"customer_id": "C1001"}, [_bill("Overdue")])
    b.user("I did make_payment. It returned: Payment successful.")
    held = gate("telecom", RESUME, b.build())
    assert held.verdict == Verdict.VERIFY and held.rule_id == "telecom.resume_line.bills_paid"
    b.tool("get_bills_for_customer", {"customer_id": "C1001"}, [_bill("Paid")])
    assert gate("telecom", RESUME, b.build()).verdict == Verdict.ALLOW


def test_resume_after_contract_end_is_blocked() -> None:
    b = ConversationBuilder().user("I am John Smith, phone 555-123-2002.")
    b.tool("get_customer_by_phone", {"phone_number": "555-123-2002"}, CUSTOMER)
    b.tool("get_details_by_id", {"id": "L1002"}, {**LINE, "contract_end_date": "2025-01-31"})
    b.tool("get_bills_for_customer", {"customer_id": "C1001"}, [_bill("Paid")])
    decision = gate("telecom", RESUME, b.build())
    assert decision.verdict == Verdict.BLOCK and decision.rule_id == "telecom.resume_line.contract_not_ended"


def test_payment_request_for_a_bill_not_overdue_is_blocked() -> None:
    call = ToolCallView(name="send_payment_request", arguments={"customer_id": "C1001", "bill_id": "B2"})
    decision = gate("telecom", call, telecom().tool("get_details_by_id", {"id": "B2"}, _bill("Issued")).build())
    assert decision.verdict == Verdict.BLOCK and decision.rule_id == "telecom.send_payment_request.bill_overdue"


# --- session behaviour ------------------------------------------------------------------


def test_transfer_advice_after_n_holds_of_the_same_tool() -> None:
    session = ActionGuardStrategy({"max_blocks_per_tool": 3}).new_session(SessionContext(domain="retail", task_id="t", policy="", tool_types={}))
    assert isinstance(session, ActionGuardSession)
    conv = retail(order()).build()  # no confirmation: every attempt is held
    decisions = [session.before_write(CANCEL, conv) for _ in range(4)]
    assert [("transfer_to_human_agents" in d.remediation) for d in decisions] == [False, False, True, True]
    assert [d.evidence["holds_for_tool"] for d in decisions] == [1, 2, 3, 4]


def test_default_transfer_threshold_is_five() -> None:
    session = ActionGuardStrategy().new_session(SessionContext(domain="retail", task_id="t", policy="", tool_types={}))
    conv = retail(order()).build()
    advice = ["transfer_to_human_agents" in session.before_write(CANCEL, conv).remediation for _ in range(5)]
    assert advice == [False, False, False, False, True]


def test_skip_items_option_drops_an_item() -> None:
    conv = retail(order()).build()
    decision = gate("retail", CANCEL, conv, skip_items="retail.*.confirmation,retail.*.reason_confirmed")
    assert decision.verdict == Verdict.ALLOW
    assert "retail.cancel_pending_order.confirmation" in decision.evidence["unchecked"]


def test_llm_backend_without_a_model_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="guard model"):
        ActionGuardStrategy({"backend": "llm"}).new_session(SessionContext(domain="retail", task_id="t", policy="", tool_types={}))


def test_on_missing_allow_holds_only_contradictions() -> None:
    lenient = gate("retail", CANCEL, retail(None).build(), on_missing="allow")
    assert lenient.verdict == Verdict.ALLOW
    assert "retail.cancel_pending_order.order_read" in lenient.evidence["unverified"]
    contradicted = retail(order(owner="someone_else_1")).build()
    assert gate("retail", CANCEL, contradicted, on_missing="allow").verdict == Verdict.BLOCK


def test_a_crashing_check_is_a_guard_error_handled_by_the_failure_policy() -> None:
    def boom(ctx: object) -> None:
        raise KeyError("no such field")

    with CHECKS.patched("retail.order_owner", boom):
        conv = retail(order()).confirm(CANCEL.name, CANCEL.arguments).build()
        closed = gate("retail", CANCEL, conv)
        assert closed.verdict == Verdict.VERIFY
        assert closed.rule_id is not None and closed.rule_id.startswith(GUARD_ERROR_RULE)
        assert "retail.order_owner" in closed.reason
        assert gate("retail", CANCEL, conv, failure_policy="open").verdict == Verdict.ALLOW
