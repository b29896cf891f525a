"""Gaps the clause-coverage table showed (docs/clause_coverage.md), closed: unit cases.

The regression cases from real conversations are in tests/test_real_cases.py (a delay
certificate without its change, a cancellation without a basis, an order modified after its
items were); here the rules with no real case, and the workflow's decision nodes.
"""

from __future__ import annotations

from typing import Any

import pytest

from tauguard_strategies.action_guard import ActionGuardStrategy
from tauguard_strategies.action_guard.builder import ConversationBuilder
from tauguard_strategies.workflow import WorkflowStrategy
from tauguard_strategies.workflow.decisions import unmet
from tauguard_strategies.workflow.graph import check_decision, load
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.dialogue import NEUTRAL
from tauguard.strategy_api.guard import FINDINGS_KEY, GuardDecision, SessionContext, Verdict

AIR_USER = "daiki_muller_1116"
AIR_TYPES = dict.fromkeys(("get_user_details", "get_reservation_details", "get_flight_status", "search_direct_flight", "search_onestop_flight"), "READ")
AIR_TYPES |= dict.fromkeys(("cancel_reservation", "book_reservation", "send_certificate", "update_reservation_flights"), "WRITE")


def _action_guard(domain: str, call: ToolCallView, conversation: Conversation) -> GuardDecision:
    session = ActionGuardStrategy({}).new_session(SessionContext(domain=domain, task_id="t", policy="", tool_types={}))
    return session.before_write(call, conversation)


def _items(decision: GuardDecision) -> set[str]:
    return {f["rule_id"].rsplit(".", 1)[-1] for f in decision.evidence.get(FINDINGS_KEY, [])}


def _workflow(call: ToolCallView, conversation: Conversation) -> GuardDecision:
    session = WorkflowStrategy({}).new_session(SessionContext(domain="airline", task_id="t", policy="", tool_types=AIR_TYPES))
    return session.before_write(call, conversation)


# --- retail: an exchange to a different option, the price difference, returned items -----------

USER = "fatima_johnson_7581"
WATCH = {"name": "Wristwatch", "product_id": "6066914160", "variants": {
    "1994478369": {"item_id": "1994478369", "options": {"strap": "leather"}, "available": True, "price": 2025.51},
    "2407258246": {"item_id": "2407258246", "options": {"strap": "metal"}, "available": True, "price": 2100.00},
    "9112290483": {"item_id": "9112290483", "options": {"strap": "silicone"}, "available": False, "price": 1990.00},
}}
PROFILE = {"user_id": USER, "payment_methods": {
    "paypal_5364164": {"source": "paypal", "id": "paypal_5364164"},
    "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 10.0},
}}


def _order(status: str) -> dict[str, Any]:
    return {"order_id": "#W5199551", "user_id": USER, "status": status,
            "items": [{"name": "Wristwatch", "product_id": "6066914160", "item_id": "1994478369", "price": 2025.51}],
            "payment_history": [{"transaction_type": "payment", "amount": 2025.51, "payment_method_id": "paypal_5364164"}]}


def _retail(tool: str, status: str, product: bool = True, **args: Any) -> tuple[ToolCallView, Conversation]:
    call = ToolCallView(name=tool, arguments={"order_id": "#W5199551", **args})
    b = ConversationBuilder().user("Hi, I'm Fatima Johnson, zip 78712. About my order #W5199551.")
    b.tool("find_user_id_by_name_zip", {"first_name": "Fatima", "last_name": "Johnson", "zip": "78712"}, USER)
    b.tool("get_order_details", {"order_id": "#W5199551"}, _order(status))
    b.tool("get_user_details", {"user_id": USER}, PROFILE)
    if product:
        b.tool("get_product_details", {"product_id": "6066914160"}, WATCH)
    return call, b.confirm(call.name, call.arguments).build()


@pytest.mark.parametrize("tool, status", [("exchange_delivered_order_items", "delivered"), ("modify_pending_order_items", "pending")])
def test_an_item_is_not_exchanged_or_modified_for_itself(tool: str, status: str) -> None:
    # "an available new item of the same product but of different product option"
    same = _retail(tool, status, item_ids=["1994478369"], new_item_ids=["1994478369"], payment_method_id="paypal_5364164")
    decision = _action_guard("retail", *same)
    assert decision.verdict == Verdict.REVISE and "same_product" in _items(decision), decision.reason
    assert "not a different option" in decision.reason
    # even without the product read: the item itself is never a new option
    unread = _retail(tool, status, product=False, item_ids=["1994478369"], new_item_ids=["1994478369"], payment_method_id="paypal_5364164")
    assert "same_product" in _items(_action_guard("retail", *unread))
    other = _retail(tool, status, item_ids=["1994478369"], new_item_ids=["2407258246"], payment_method_id="paypal_5364164")
    assert "same_product" not in _items(_action_guard("retail", *other))
    gone = _retail(tool, status, item_ids=["1994478369"], new_item_ids=["9112290483"], payment_method_id="paypal_5364164")
    assert "not available" in _action_guard("retail", *gone).reason


def test_a_gift_card_must_cover_the_price_difference() -> None:
    # 2100.00 - 2025.51 = 74.49 to pay; the gift card holds 10
    short = _retail("exchange_delivered_order_items", "delivered", item_ids=["1994478369"], new_item_ids=["2407258246"], payment_method_id="gift_card_1")
    decision = _action_guard("retail", *short)
    assert decision.verdict == Verdict.REVISE and "payment_covers" in _items(decision), decision.reason
    stranger = _retail("exchange_delivered_order_items", "delivered", item_ids=["1994478369"], new_item_ids=["2407258246"], payment_method_id="credit_card_9")
    assert "payment_covers" in _items(_action_guard("retail", *stranger))
    fine = _retail("exchange_delivered_order_items", "delivered", item_ids=["1994478369"], new_item_ids=["2407258246"], payment_method_id="paypal_5364164")
    assert "payment_covers" not in _items(_action_guard("retail", *fine))


def test_a_gift_card_must_cover_the_order_total_when_it_becomes_the_payment() -> None:
    call, conv = _retail("modify_pending_order_payment", "pending", payment_method_id="gift_card_1")
    decision = _action_guard("retail", call, conv)
    assert "gift_card_balance" in _items(decision) and "2025.51" in decision.reason


def test_returned_items_must_be_in_the_order() -> None:
    call, conv = _retail("return_delivered_order_items", "delivered", item_ids=["1994478369", "1994478369"], payment_method_id="paypal_5364164")
    decision = _action_guard("retail", call, conv)
    assert decision.verdict == Verdict.REVISE and "items_in_order" in _items(decision), decision.reason
    call, conv = _retail("return_delivered_order_items", "delivered", item_ids=["1994478369"], payment_method_id="paypal_5364164")
    assert "items_in_order" not in _items(_action_guard("retail", call, conv))


@pytest.mark.parametrize("tool, args", [
    ("cancel_pending_order", {"reason": "no longer needed"}),
    ("modify_pending_order_payment", {"payment_method_id": "gift_card_1"}),
])
def test_nothing_changes_an_order_after_its_items_were_modified(tool: str, args: dict[str, Any]) -> None:
    # "The agent will not be able to modify or cancel the order anymore"
    modify = {"order_id": "#W5199551", "item_ids": ["1994478369"], "new_item_ids": ["2407258246"], "payment_method_id": "paypal_5364164"}
    call, conv = _retail(tool, "pending", **args)
    # the item change happened earlier; the order was not read again since (its status is stale)
    events = list(conv.events)
    b = ConversationBuilder().tool("modify_pending_order_items", modify, {"order_id": "#W5199551"})
    conv = Conversation(events=events[:8] + b.build().events + events[8:])
    decision = _action_guard("retail", call, conv)
    assert decision.verdict == Verdict.BLOCK and "items_not_modified" in _items(decision), decision.reason


# --- airline: compensation tied to the change, the route of a booking, the cancellation basis ---


def _reservation(cabin: str = "economy", insurance: str = "no", created: str = "2024-05-01T05:17:41") -> dict[str, Any]:
    return {"reservation_id": "XEHM4B", "user_id": AIR_USER, "origin": "LAS", "destination": "ATL", "flight_type": "round_trip",
            "cabin": cabin, "insurance": insurance, "created_at": created, "total_baggages": 0, "nonfree_baggages": 0,
            "flights": [{"flight_number": "HAT005", "origin": "LAS", "destination": "ATL", "date": "2024-05-20", "price": 65},
                        {"flight_number": "HAT178", "origin": "ATL", "destination": "LAS", "date": "2024-05-30", "price": 83}],
            "passengers": [{"first_name": "Daiki", "last_name": "Muller", "dob": "1954-07-04"}]}


def _airline(say: str, res: dict[str, Any], statuses: dict[str, str]) -> ConversationBuilder:
    b = ConversationBuilder().user(f"Hi, my user id is {AIR_USER}. {say}")
    b.tool("get_user_details", {"user_id": AIR_USER}, {"user_id": AIR_USER, "membership": "gold", "payment_methods": {}, "reservations": ["XEHM4B"]})
    b.tool("get_reservation_details", {"reservation_id": "XEHM4B"}, res)
    for (number, date), status in zip([("HAT005", "2024-05-20"), ("HAT178", "2024-05-30")], statuses.values(), strict=False):
        b.tool("get_flight_status", {"flight_number": number, "date": date}, status)
    return b


CERTIFICATE = ToolCallView(name="send_certificate", arguments={"user_id": AIR_USER, "amount": 50})
CANCEL = ToolCallView(name="cancel_reservation", arguments={"reservation_id": "XEHM4B"})


def test_a_delay_certificate_after_the_cancellation_of_the_delayed_reservation_is_allowed() -> None:
    b = _airline("My flight HAT005 is delayed, please cancel XEHM4B and I want compensation.", _reservation(cabin="business"), {"a": "delayed"})
    b.confirm(CANCEL.name, CANCEL.arguments).tool(CANCEL.name, CANCEL.arguments, _reservation(cabin="business") | {"status": "cancelled"})
    conv = b.confirm(CERTIFICATE.name, CERTIFICATE.arguments).build()
    assert "delay_after_change" not in _items(_action_guard("airline", CERTIFICATE, conv))
    assert unmet("airline", load("airline").nodes["compensation.eligible"], CERTIFICATE, conv, NEUTRAL) is None
    before = Conversation(events=[e for e in conv.events if not (e.tool_call and e.tool_call.name == CANCEL.name)])
    found = unmet("airline", load("airline").nodes["compensation.eligible"], CERTIFICATE, before, NEUTRAL)
    assert found is not None and found[0].id == "airline.send_certificate.delay_after_change"


def test_the_workflow_holds_a_booking_whose_return_repeats_the_outbound_route() -> None:
    flights = [{"flight_number": "HAT005", "date": "2024-05-20"}, {"flight_number": "HAT006", "date": "2024-05-22"}]
    call = ToolCallView(name="book_reservation", arguments={
        "user_id": AIR_USER, "origin": "LAS", "destination": "ATL", "flight_type": "round_trip", "cabin": "economy", "flights": flights,
        "passengers": [{"first_name": "Daiki", "last_name": "Muller", "dob": "1954-07-04"}], "payment_methods": [],
        "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"})
    b = ConversationBuilder().user(f"Hi, my user id is {AIR_USER}. I want to book a round trip from LAS to ATL.")
    b.tool("get_user_details", {"user_id": AIR_USER}, {"user_id": AIR_USER, "membership": "gold", "payment_methods": {}})
    b.tool("search_direct_flight", {"origin": "LAS", "destination": "ATL", "date": "2024-05-20"},
           [{"flight_number": "HAT005", "origin": "LAS", "destination": "ATL", "status": "available"},
            {"flight_number": "HAT006", "origin": "LAS", "destination": "ATL", "status": "available"}])
    b.agent("Would you like travel insurance?").user("No thanks.")
    decision = _workflow(call, b.confirm(call.name, call.arguments).build())
    # the observed routes contradict the trip: the policy forbids it, so the guide refuses under the clause
    assert decision.verdict == Verdict.BLOCK and decision.evidence["unmet"] == "book.check_limits", decision.reason
    assert decision.rule_id == "airline.booking_route_asked" and "last flight arrives at ATL, not LAS" in decision.reason


@pytest.mark.parametrize("res, statuses, say, held", [
    (_reservation(cabin="business"), {}, "Please cancel XEHM4B, my plans changed.", False),
    (_reservation(created="2024-05-15T01:00:00"), {}, "Please cancel XEHM4B, my plans changed.", False),
    (_reservation(), {"a": "cancelled", "b": "available"}, "Please cancel XEHM4B, the airline cancelled my flight.", False),
    (_reservation(insurance="yes"), {"a": "available", "b": "available"}, "Please cancel XEHM4B, I am sick and cannot travel.", False),
    (_reservation(insurance="yes"), {"a": "available", "b": "available"}, "Please cancel XEHM4B, my plans changed.", True),
    (_reservation(), {"a": "available", "b": "available"}, "Please cancel XEHM4B, my plans changed.", True),
])
def test_the_workflow_decides_the_cancellation_basis_without_an_llm(res: dict[str, Any], statuses: dict[str, str], say: str, held: bool) -> None:
    # booked < 24 h, airline cancelled, business cabin, insured with a covered reason (the dialogue
    # module's reason judge): the write contract's basis alternatives of cancel_reservation
    conv = _airline(say, res, statuses).confirm(CANCEL.name, CANCEL.arguments).build()
    decision = _workflow(CANCEL, conv)
    assert (decision.evidence.get("unmet") == "cancel.eligible") == held, decision.reason
    if held:
        assert "no cancellation condition holds" in decision.reason


def test_a_decision_names_only_deterministic_items_of_the_writes_it_gates() -> None:
    node = load("airline").nodes["cancel.eligible"]
    check_decision("airline", ["cancel_reservation"], node)
    with pytest.raises(ValueError, match="no checklist item of book_reservation"):
        check_decision("airline", ["book_reservation"], node)
    llm_only = node.model_copy(update={"checks": ["airline.book_reservation.passenger_details"]})
    with pytest.raises(ValueError, match="has no deterministic check"):
        check_decision("airline", ["book_reservation"], llm_only)
    with pytest.raises(ValueError, match="only a decision node"):
        type(node).model_validate(node.model_dump() | {"type": "agent_action"})
