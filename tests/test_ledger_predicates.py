"""Ledger predicates on real tau2 read returns: each verdict kind per domain, with its clause."""

from __future__ import annotations

from typing import Any

import pytest

from tauguard_strategies.ledger import LedgerSession
from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import GuardDecision, Verdict
from tauguard.tau2_adapter.replay import call_tool, fresh_environment

CONV = Conversation()


@pytest.fixture(scope="module")
def airline() -> t2.Environment:
    return t2.make_environment("airline")  # reads only: shared by the module's tests


@pytest.fixture(scope="module")
def retail() -> t2.Environment:
    return t2.make_environment("retail")


def _session(domain: str) -> LedgerSession:
    return LedgerSession(domain, t2.tool_types(domain)[0])


def _reads(session: LedgerSession, env: t2.Environment, *calls: tuple[str, dict[str, Any]]) -> None:
    for name, args in calls:
        result = call_tool(env, ToolCallView(id=name, name=name, arguments=args))
        assert not result.error, result.content
        session.after_tool(result, CONV)


def _wrote(session: LedgerSession, name: str, **args: Any) -> None:
    """A successful write as the agent would receive it (its content is never absorbed)."""
    call = ToolCallView(id=name, name=name, arguments=args)
    session.after_tool(ConversationEvent(kind="tool_result", tool_call=call, content="{}"), CONV)


def _gate(session: LedgerSession, name: str, **args: Any) -> GuardDecision:
    return session.before_write(ToolCallView(id="w", name=name, arguments=args), CONV)


def _assert(decision: GuardDecision, verdict: Verdict, rule_id: str | None = None) -> None:
    assert decision.verdict == verdict, decision.reason
    if rule_id is not None:
        assert decision.rule_id == rule_id, decision.reason
    if verdict != Verdict.ALLOW:
        assert "Policy (" in decision.reason and decision.remediation


# --- airline ---------------------------------------------------------------------------


def _user(uid: str) -> tuple[str, dict[str, Any]]:
    return ("get_user_details", {"user_id": uid})


def _res(rid: str) -> tuple[str, dict[str, Any]]:
    return ("get_reservation_details", {"reservation_id": rid})


def _status(number: str, date: str) -> tuple[str, dict[str, Any]]:
    return ("get_flight_status", {"flight_number": number, "date": date})


def test_airline_reservation_of_another_user_is_blocked(airline: t2.Environment) -> None:
    s = _session("airline")
    _reads(s, airline, _user("amelia_rossi_1297"), _res("3I818F"))
    d = _gate(s, "cancel_reservation", reservation_id="3I818F")
    _assert(d, Verdict.BLOCK, "airline.reservation_owner")
    assert d.evidence["ledger"] == {"reservations/3I818F/user_id": "amelia_nguyen_7778", "identified_user": "amelia_rossi_1297"}


def test_airline_flown_reservation_cannot_be_cancelled(airline: t2.Environment) -> None:
    s = _session("airline")
    _reads(s, airline, _user("aarav_ahmed_6699"), _res("NQNU5R"))
    d = _gate(s, "cancel_reservation", reservation_id="NQNU5R")
    _assert(d, Verdict.VERIFY, "airline.cancel_not_flown")  # past segments, status unobserved
    assert [r["arguments"] for r in d.evidence["required_reads"]] == [
        {"flight_number": "HAT214", "date": "2024-05-13"}, {"flight_number": "HAT045", "date": "2024-05-14"}]
    _reads(s, airline, _status("HAT214", "2024-05-13"), _status("HAT045", "2024-05-14"))
    d = _gate(s, "cancel_reservation", reservation_id="NQNU5R")
    _assert(d, Verdict.BLOCK, "airline.cancel_not_flown")
    assert "transfer_to_human_agents" in d.remediation


def test_airline_cancelled_flight_is_a_cancellation_basis(airline: t2.Environment) -> None:
    s = _session("airline")
    _reads(s, airline, _user("harper_garcia_8677"), _res("JN75RZ"), _status("HAT162", "2024-05-14"), _status("HAT229", "2024-05-23"))
    d = _gate(s, "cancel_reservation", reservation_id="JN75RZ")
    _assert(d, Verdict.ALLOW)
    assert d.evidence["checked"] == ["airline.reservation_owner", "airline.cancel_not_flown", "airline.cancel_requires_basis"]
    # the explicit yes constrains a cancellation too (the write contract), and a ledger of reads cannot see it
    assert d.evidence["not_observable"] == ["airline.cancel_basis_insurance", "airline.cancel_reason", "airline.explicit_confirmation"]


def test_airline_basic_economy_keeps_its_flights(airline: t2.Environment) -> None:
    s = _session("airline")
    _reads(s, airline, _user("amelia_rossi_1297"), _res("SI5UKW"))
    same = [{"flight_number": "HAT062", "date": "2024-05-16"}, {"flight_number": "HAT284", "date": "2024-05-17"}]
    moved = [{"flight_number": "HAT062", "date": "2024-05-18"}, {"flight_number": "HAT284", "date": "2024-05-19"}]
    d = _gate(s, "update_reservation_flights", reservation_id="SI5UKW", cabin="basic_economy", flights=moved, payment_id="credit_card_4579924")
    _assert(d, Verdict.BLOCK, "airline.basic_economy_no_change")
    # A cabin change on the same flights is allowed, also for basic economy.
    d = _gate(s, "update_reservation_flights", reservation_id="SI5UKW", cabin="economy", flights=same, payment_id="credit_card_4579924")
    _assert(d, Verdict.ALLOW)


def test_airline_route_change_and_certificate_payment(airline: t2.Environment) -> None:
    s = _session("airline")
    _reads(s, airline, _user("amelia_nguyen_7778"), _res("3I818F"))  # JFK-ATL round trip, economy
    search = call_tool(airline, ToolCallView(name="search_direct_flight", arguments={"origin": "JFK", "destination": "ORD", "date": "2024-05-16"}))
    assert not search.error
    s.after_tool(search, CONV)
    elsewhere = next(f for f in s.ledger.flights.values() if f.destination == "ORD")
    flights = [{"flight_number": elsewhere.flight_number, "date": "2024-05-16"}, {"flight_number": "HAT285", "date": "2024-05-17"}]
    d = _gate(s, "update_reservation_flights", reservation_id="3I818F", cabin="economy", flights=flights, payment_id="credit_card_4056234")
    _assert(d, Verdict.BLOCK, "airline.same_route")
    same = [{"flight_number": "HAT218", "date": "2024-05-15"}, {"flight_number": "HAT285", "date": "2024-05-17"}]
    _reads(s, airline, _status("HAT218", "2024-05-15"))
    d = _gate(s, "update_reservation_flights", reservation_id="3I818F", cabin="business", flights=same, payment_id="certificate_9996397")
    _assert(d, Verdict.REVISE, "airline.change_payment")


def test_airline_unobserved_route_needs_a_search(airline: t2.Environment) -> None:
    s = _session("airline")
    _reads(s, airline, _user("amelia_nguyen_7778"), _res("3I818F"))
    flights = [{"flight_number": "HAT999", "date": "2024-05-18"}, {"flight_number": "HAT285", "date": "2024-05-17"}]
    d = _gate(s, "update_reservation_flights", reservation_id="3I818F", cabin="economy", flights=flights, payment_id="credit_card_4056234")
    _assert(d, Verdict.VERIFY, "airline.same_route")
    assert d.evidence["required_reads"][0]["tool"] == "search_direct_flight"


def test_airline_bags(airline: t2.Environment) -> None:
    s = _session("airline")
    _reads(s, airline, _user("amelia_rossi_1297"), _res("SI5UKW"), _res("F48YRY"))
    # regular member, basic economy, one passenger: no free bag.
    d = _gate(s, "update_reservation_baggages", reservation_id="SI5UKW", total_baggages=2, nonfree_baggages=1, payment_id="credit_card_4579924")
    _assert(d, Verdict.REVISE, "airline.bag_allowance")
    assert d.revised_arguments == {"reservation_id": "SI5UKW", "total_baggages": 2, "nonfree_baggages": 2, "payment_id": "credit_card_4579924"}
    d = _gate(s, "update_reservation_baggages", reservation_id="SI5UKW", total_baggages=2, nonfree_baggages=2, payment_id="gift_card_0000000")
    _assert(d, Verdict.REVISE, "airline.payment_in_profile")
    d = _gate(s, "update_reservation_baggages", reservation_id="F48YRY", total_baggages=5, nonfree_baggages=0, payment_id="credit_card_4579924")
    _assert(d, Verdict.BLOCK, "airline.no_bag_removal")
    d = _gate(s, "update_reservation_baggages", reservation_id="F48YRY", total_baggages=7, nonfree_baggages=1, payment_id="credit_card_4579924")
    _assert(d, Verdict.ALLOW)  # business, 3 passengers, regular: 6 free


def test_airline_passenger_count(airline: t2.Environment) -> None:
    s = _session("airline")
    _reads(s, airline, _user("amelia_rossi_1297"), _res("SI5UKW"))
    pax = {"first_name": "A", "last_name": "B", "dob": "1990-01-01"}
    _assert(_gate(s, "update_reservation_passengers", reservation_id="SI5UKW", passengers=[pax, pax]), Verdict.BLOCK, "airline.passenger_count")
    _assert(_gate(s, "update_reservation_passengers", reservation_id="SI5UKW", passengers=[pax]), Verdict.ALLOW)


def test_airline_booking_limits(airline: t2.Environment) -> None:
    s = _session("airline")
    _reads(s, airline, _user("mia_li_3668"))
    base = dict(user_id="mia_li_3668", origin="JFK", destination="SEA", flight_type="one_way", cabin="economy",
                flights=[{"flight_number": "HAT136", "date": "2024-05-20"}], total_baggages=0, nonfree_baggages=0, insurance="no")
    pax = {"first_name": "A", "last_name": "B", "dob": "1990-01-01"}
    two_cards = [{"payment_id": "credit_card_4421486", "amount": 100}, {"payment_id": "credit_card_1955700", "amount": 100}]
    _assert(_gate(s, "book_reservation", **base, passengers=[pax] * 6, payment_methods=two_cards[:1]), Verdict.BLOCK, "airline.max_passengers")
    _assert(_gate(s, "book_reservation", **base, passengers=[pax], payment_methods=two_cards), Verdict.REVISE, "airline.payment_limits")
    unknown = [{"payment_id": "credit_card_0000000", "amount": 100}]
    _assert(_gate(s, "book_reservation", **base, passengers=[pax], payment_methods=unknown), Verdict.REVISE, "airline.payment_in_profile")
    _assert(_gate(s, "book_reservation", **base, passengers=[pax], payment_methods=two_cards[:1]), Verdict.ALLOW)
    other = dict(base, user_id="amelia_rossi_1297")
    _assert(_gate(s, "book_reservation", **other, passengers=[pax], payment_methods=two_cards[:1]), Verdict.BLOCK, "airline.booking_user")


def test_airline_compensation(airline: t2.Environment) -> None:
    silver = _session("airline")
    _reads(silver, airline, _user("amelia_nguyen_7778"), _res("3I818F"))  # silver, 3 passengers
    _assert(_gate(silver, "send_certificate", user_id="amelia_nguyen_7778", amount=150), Verdict.VERIFY, "airline.compensation_facts")
    _reads(silver, airline, _status("HAT218", "2024-05-15"), _status("HAT285", "2024-05-17"))  # HAT218 delayed
    # the delay gesture comes "after confirming the facts and changing or cancelling the reservation"
    _assert(_gate(silver, "send_certificate", user_id="amelia_nguyen_7778", amount=150), Verdict.BLOCK, "airline.compensation_delayed")
    _wrote(silver, "update_reservation_flights", reservation_id="3I818F", cabin="economy", flights=[], payment_id="x")
    _reads(silver, airline, _res("3I818F"))
    _assert(_gate(silver, "send_certificate", user_id="amelia_nguyen_7778", amount=150), Verdict.ALLOW)
    d = _gate(silver, "send_certificate", user_id="amelia_nguyen_7778", amount=300)
    _assert(d, Verdict.REVISE, "airline.compensation_amount")
    assert d.revised_arguments == {"user_id": "amelia_nguyen_7778", "amount": 150}
    regular = _session("airline")
    _reads(regular, airline, _user("mia_santos_2092"), _res("4NXSCL"), _status("HAT240", "2024-05-15"), _status("HAT136", "2024-05-15"))
    _assert(_gate(regular, "send_certificate", user_id="mia_santos_2092", amount=50), Verdict.BLOCK, "airline.compensation_eligibility")


# --- retail ----------------------------------------------------------------------------


def test_retail_requires_authentication_then_one_user(retail: t2.Environment) -> None:
    s = _session("retail")
    _reads(s, retail, ("get_order_details", {"order_id": "#W4566809"}))
    d = _gate(s, "cancel_pending_order", order_id="#W4566809", reason="no longer needed")
    _assert(d, Verdict.VERIFY, "retail.authenticate")
    assert d.evidence["required_reads"][0]["tool"] == "find_user_id_by_email"
    _reads(s, retail, ("find_user_id_by_email", {"email": "chen.silva2698@example.com"}))
    _assert(_gate(s, "cancel_pending_order", order_id="#W4566809", reason="no longer needed"), Verdict.BLOCK, "retail.one_user")
    _assert(_gate(s, "modify_user_address", user_id="raj_sanchez_2970", address1="a", address2="", city="c", state="s", country="USA", zip="1"),
            Verdict.BLOCK, "retail.one_user")


def test_retail_pending_order_rules(retail: t2.Environment) -> None:
    s = _session("retail")
    _reads(s, retail, ("find_user_id_by_email", {"email": "raj.sanchez2046@example.com"}), ("get_order_details", {"order_id": "#W4566809"}),
           ("get_user_details", {"user_id": "raj_sanchez_2970"}))
    _assert(_gate(s, "cancel_pending_order", order_id="#W4566809", reason="too expensive"), Verdict.BLOCK, "retail.cancel_reason")
    _assert(_gate(s, "cancel_pending_order", order_id="#W4566809", reason="ordered by mistake"), Verdict.ALLOW)
    _assert(_gate(s, "modify_pending_order_payment", order_id="#W4566809", payment_method_id="credit_card_3362387"),
            Verdict.BLOCK, "retail.payment_single_different")
    _assert(_gate(s, "modify_pending_order_payment", order_id="#W4566809", payment_method_id="gift_card_2259499"),
            Verdict.REVISE, "retail.payment_gift_card_balance")  # balance 30 < total 826.7
    _reads(s, retail, ("get_product_details", {"product_id": "2985987096"}))
    identical = dict(order_id="#W4566809", item_ids=["1569829406"], new_item_ids=["1569829406"], payment_method_id="credit_card_3362387")
    _assert(_gate(s, "modify_pending_order_items", **identical), Verdict.REVISE, "retail.modify_same_product")
    _wrote(s, "modify_pending_order_items", order_id="#W4566809", item_ids=["1569829406"], new_item_ids=["x"], payment_method_id="credit_card_3362387")
    d = _gate(s, "modify_pending_order_items", order_id="#W4566809", item_ids=["5826601160"], new_item_ids=["y"], payment_method_id="credit_card_3362387")
    _assert(d, Verdict.BLOCK, "retail.modify_items_once")  # from the write history, without a re-read
    # "The agent will not be able to modify or cancel the order anymore": from the write history too
    _assert(_gate(s, "modify_pending_order_address", order_id="#W4566809", address1="a", address2="", city="c", state="s", country="USA", zip="1"),
            Verdict.BLOCK, "retail.modify_items_once")
    _assert(_gate(s, "modify_pending_order_payment", order_id="#W4566809", payment_method_id="paypal_5364164"), Verdict.BLOCK, "retail.modify_items_once")
    _assert(_gate(s, "cancel_pending_order", order_id="#W4566809", reason="ordered by mistake"), Verdict.BLOCK, "retail.modify_items_once")


def test_retail_delivered_order_rules(retail: t2.Environment) -> None:
    s = _session("retail")
    _reads(s, retail, ("find_user_id_by_name_zip", {"first_name": "Chen", "last_name": "Silva", "zip": "46281"}),
           ("get_order_details", {"order_id": "#W3069600"}), ("get_user_details", {"user_id": "chen_silva_7485"}))
    _assert(_gate(s, "cancel_pending_order", order_id="#W3069600", reason="no longer needed"), Verdict.BLOCK, "retail.cancel_pending")
    exchange = dict(order_id="#W3069600", item_ids=["6065192424"], new_item_ids=["2106335193"], payment_method_id="credit_card_1565124")
    _assert(_gate(s, "exchange_delivered_order_items", **exchange), Verdict.REVISE, "retail.exchange_same_product")  # not in the order
    tablet = dict(exchange, item_ids=["8551474201"])
    d = _gate(s, "exchange_delivered_order_items", **tablet)
    _assert(d, Verdict.VERIFY, "retail.exchange_same_product")
    assert d.evidence["required_reads"][0]["arguments"] == {"product_id": "8024098596"}
    _reads(s, retail, ("get_product_details", {"product_id": "8024098596"}))
    _assert(_gate(s, "exchange_delivered_order_items", **tablet), Verdict.ALLOW)
    _assert(_gate(s, "exchange_delivered_order_items", **dict(tablet, new_item_ids=["3788616824"])), Verdict.REVISE)  # unavailable
    # "an available new item of the same product but of different product option": the item itself
    # is none, in stock or not (the exchange tool accepts it; tau2's gold tasks 18, 91, 107 do it).
    d = _gate(s, "exchange_delivered_order_items", **dict(tablet, new_item_ids=["8551474201"]))
    _assert(d, Verdict.REVISE, "retail.exchange_same_product")
    assert "the same as the old one" in d.reason
    _reads(s, retail, ("get_order_details", {"order_id": "#W9571698"}), ("get_product_details", {"product_id": "8024098596"}))
    same = dict(order_id="#W9571698", item_ids=["6065192424"], new_item_ids=["6065192424"], payment_method_id="gift_card_7250692")
    _assert(_gate(s, "exchange_delivered_order_items", **same), Verdict.REVISE, "retail.exchange_same_product")
    _wrote(s, "exchange_delivered_order_items", **tablet)
    _assert(_gate(s, "exchange_delivered_order_items", **tablet), Verdict.BLOCK, "retail.once_per_order")


# --- telecom ---------------------------------------------------------------------------


def _telecom_task(marker: str) -> t2.Task:
    return next(t for t in t2.load_tasks("telecom", "base") if marker in t.id)


def test_telecom_overdue_bill_flow() -> None:
    task = next(t for t in t2.load_tasks("telecom", "base")
                if [a.name for a in t.evaluation_criteria.actions].count("resume_line") and "contract_end" not in t.id)
    env = fresh_environment("telecom", task)
    s = _session("telecom")
    _assert(_gate(s, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=1.0), Verdict.VERIFY, "telecom.identify_customer")
    _reads(s, env, ("get_customer_by_phone", {"phone_number": "555-123-2002"}), ("get_bills_for_customer", {"customer_id": "C1001"}),
           ("get_details_by_id", {"id": "L1002"}))
    d = _gate(s, "send_payment_request", customer_id="C1001", bill_id="B1002")
    _assert(d, Verdict.REVISE, "telecom.bill_overdue")
    assert d.revised_arguments == {"customer_id": "C1001", "bill_id": "B1234321"}
    _assert(_gate(s, "send_payment_request", customer_id="C1001", bill_id="B1234321"), Verdict.ALLOW)
    _assert(_gate(s, "resume_line", customer_id="C1001", line_id="L1002"), Verdict.BLOCK, "telecom.resume_after_payment")
    _assert(_gate(s, "resume_line", customer_id="C1001", line_id="L9999"), Verdict.BLOCK, "telecom.line_of_customer")
    _assert(_gate(s, "enable_roaming", customer_id="C2002", line_id="L1002"), Verdict.BLOCK, "telecom.identify_customer")
    d = _gate(s, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=3.5)
    _assert(d, Verdict.REVISE, "telecom.refuel_max")
    assert d.revised_arguments is not None and d.revised_arguments["gb_amount"] == 2.0
    # The payment: the request (agent write) then the user's payment on the device.
    for call in (ToolCallView(id="p", name="send_payment_request", arguments={"customer_id": "C1001", "bill_id": "B1234321"}),
                 ToolCallView(id="m", name="make_payment", arguments={}, requestor="user")):
        result = call_tool(env, call)
        assert not result.error, result.content
        s.after_tool(result, CONV)  # the user-side result is ignored, as the wrapper never sends it
    _assert(_gate(s, "resume_line", customer_id="C1001", line_id="L1002"), Verdict.VERIFY, "telecom.resume_after_payment")
    _reads(s, env, ("get_bills_for_customer", {"customer_id": "C1001"}))
    _assert(_gate(s, "resume_line", customer_id="C1001", line_id="L1002"), Verdict.ALLOW)


def test_telecom_ended_contract_blocks_resume() -> None:
    task = _telecom_task("contract_end_suspension|unseat_sim_card[PERSONA:Hard]")
    env = fresh_environment("telecom", task)
    for call in (ToolCallView(id="p", name="send_payment_request", arguments={"customer_id": "C1001", "bill_id": "B1234321"}),
                 ToolCallView(id="m", name="make_payment", arguments={}, requestor="user")):
        assert not call_tool(env, call).error
    s = _session("telecom")
    _reads(s, env, ("get_customer_by_id", {"customer_id": "C1001"}), ("get_bills_for_customer", {"customer_id": "C1001"}),
           ("get_details_by_id", {"id": "L1002"}))
    d = _gate(s, "resume_line", customer_id="C1001", line_id="L1002")
    _assert(d, Verdict.BLOCK, "telecom.resume_contract")
    assert d.evidence["ledger"]["lines/L1002/contract_end_date"] < "2025-02-25"
