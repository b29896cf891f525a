"""Guard errors found in review (issue 10), as probes that keep their ids, plus the dialogue
cases behind them: one "yes" authorises one write, airline-cancelled segments are not flown,
compensation needs an observed disruption, an uncovered insured reason is refused, acting
for another telecom customer is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tauguard_strategies.action_guard import ActionGuardStrategy
from tauguard_strategies.action_guard.builder import ConversationBuilder
from tauguard_strategies.action_guard.dialogue import mentions_value
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.strategy_api.guard import FINDINGS_KEY, GuardDecision, SessionContext, Verdict

PROBES = Path(__file__).parent / "data" / "guard_errors.jsonl"

# probe id -> strategy -> (label first, label after the requested reads or None, rule id)
EXPECTED: dict[str, dict[str, tuple[str, str | None, str | None]]] = {
    "share/airline/cancel-after-airline-cancellation-PMZURQ": {
        "ledger": ("allow", None, None),
        "action-guard": ("allow", None, None),
    },
    "share/airline/certificate-no-disruption-59XX6W": {
        "ledger": ("refuse", None, "airline.compensation_facts"),
        "action-guard": ("refuse", None, "airline.send_certificate.reason"),
    },
    "share/airline/cancel-insured-change-of-plan-59XX6W": {
        # The ledger cannot observe the reason: it allows and names the clause (test below).
        "ledger": ("allow", None, None),
        "action-guard": ("verify", "refuse", "airline.cancel_reservation.basis"),
    },
    "repro/retail/102/items-after-address-yes": {
        "ledger": ("allow", None, None),  # confirmations are dialogue: not observable
        "action-guard": ("verify", None, "retail.modify_pending_order_items.confirmation"),
    },
    "repro/airline/32/second-change-reuses-yes": {
        "ledger": ("allow", None, None),
        "action-guard": ("verify", None, "airline.update_reservation_flights.confirmation"),
    },
    "repro/telecom/other-customer-after-lookup": {
        "ledger": ("refuse", None, "telecom.identify_customer"),
        "action-guard": ("refuse", None, "telecom.suspend_line.customer_identified"),
    },
}


@pytest.fixture(scope="module")
def reports() -> dict[str, Any]:
    from tauguard.probes.evaluate import evaluate_probes
    from tauguard.probes.model import read_probes

    probes = read_probes(PROBES)
    assert sorted(p.id or "" for p in probes) == sorted(EXPECTED)
    return {s: {o.probe_id: o for o in evaluate_probes(s, probes).outcomes} for s in ("ledger", "action-guard")}


@pytest.mark.parametrize("strategy", ["ledger", "action-guard"])
@pytest.mark.parametrize("probe_id", sorted(EXPECTED))
def test_guard_error_probes(reports: dict[str, Any], strategy: str, probe_id: str) -> None:
    outcome = reports[strategy][probe_id]
    first, after, rule = EXPECTED[probe_id][strategy]
    assert outcome.reproduced
    assert (outcome.predicted, outcome.predicted_after_reads, outcome.rule_id) == (first, after, rule), outcome.reason


def test_ledger_names_the_unobservable_insurance_reason() -> None:
    from tauguard.tau2_adapter import compat as t2
    from tauguard.probes.model import read_probes
    from tauguard.strategy_api.registry import create_strategy
    from tauguard.tau2_adapter.replay import session_context
    from tauguard.sim.plan_replay import gate_after_prefix

    probe = next(p for p in read_probes(PROBES) if p.id == "share/airline/cancel-insured-change-of-plan-59XX6W")
    task = next(t for t in t2.load_tasks("airline", "base") if t.id == probe.task_id)
    session = create_strategy("ledger", {}).new_session(session_context("airline", task.id))
    decision, _ = gate_after_prefix(session, "airline", task, probe.prefix, probe.call)
    assert decision.verdict == Verdict.ALLOW
    assert "airline.cancel_basis_insurance" in decision.evidence["not_observable"]
    assert "not observable" in decision.evidence["ledger"]["insurance_basis"]


# --- one "yes" per write (action-guard, hand-built conversations) ----------------------------


def gate(domain: str, call: ToolCallView, conversation: Conversation) -> GuardDecision:
    session = ActionGuardStrategy({}).new_session(SessionContext(domain=domain, task_id="t", policy="", tool_types={}))
    return session.before_write(call, conversation)


def confirmation_failed(decision: GuardDecision) -> bool:
    return any(f["rule_id"].endswith(".confirmation") for f in decision.evidence.get(FINDINGS_KEY, []))


RETAIL_USER = "noah_ito_3850"
ORDER = {
    "order_id": "#W4219264", "user_id": RETAIL_USER, "status": "pending",
    "items": [{"name": "Smart Watch", "product_id": "6066914160", "item_id": "8886009523", "price": 1944.02}],
    "payment_history": [{"transaction_type": "payment", "amount": 1944.02, "payment_method_id": "credit_card_1620755"}],
}
ADDRESS = ToolCallView(name="modify_pending_order_address", arguments={
    "order_id": "#W4219264", "address1": "144 Lakeview Drive", "address2": "Suite 925", "city": "New York", "country": "USA", "state": "NY", "zip": "10228"})
ITEMS = ToolCallView(name="modify_pending_order_items", arguments={
    "order_id": "#W4219264", "item_ids": ["8886009523"], "new_item_ids": ["2407258246"], "payment_method_id": "credit_card_1620755"})


def retail() -> ConversationBuilder:
    b = ConversationBuilder().user("Change the address of #W4219264 and the watch in it. Email noah.ito4296@example.com.")
    b.tool("find_user_id_by_email", {"email": "noah.ito4296@example.com"}, RETAIL_USER)
    return b.tool("get_order_details", {"order_id": "#W4219264"}, ORDER)


def test_a_yes_for_the_address_does_not_cover_the_items_of_the_same_order() -> None:
    b = retail().confirm(ADDRESS.name, ADDRESS.arguments)
    # Not yet executed: the address statement does not state the new items.
    assert confirmation_failed(gate("retail", ITEMS, b.build()))
    assert not confirmation_failed(gate("retail", ADDRESS, b.build()))
    b.tool(ADDRESS.name, ADDRESS.arguments, dict(ORDER, address={"address1": "144 Lakeview Drive"}))
    assert confirmation_failed(gate("retail", ITEMS, b.build()))
    b.confirm(ITEMS.name, ITEMS.arguments)
    assert not confirmation_failed(gate("retail", ITEMS, b.build()))


def test_free_phrasing_yes_is_consumed_by_the_write_it_covered() -> None:
    b = retail().agent("I'll change the shipping address of order W4219264 to 144 Lakeview Drive, Suite 925, New York, NY 10228. OK?").user("Yes please.")
    assert not confirmation_failed(gate("retail", ADDRESS, b.build()))
    b.tool(ADDRESS.name, ADDRESS.arguments, ORDER)
    assert confirmation_failed(gate("retail", ADDRESS.model_copy(update={"arguments": dict(ADDRESS.arguments, zip="10001")}), b.build()))


AIR_USER = "ivan_rossi_8555"
RES = {
    "reservation_id": "OWZ4XL", "user_id": AIR_USER, "origin": "EWR", "destination": "LAX", "flight_type": "one_way", "cabin": "economy",
    "flights": [{"flight_number": "HAT041", "origin": "EWR", "destination": "LAX", "date": "2024-05-20", "price": 120}],
    "passengers": [{"first_name": "Ivan", "last_name": "Rossi", "dob": "1980-01-01"}], "created_at": "2024-05-01T10:00:00",
    "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no",
}


def change(*flights: str) -> ToolCallView:
    return ToolCallView(name="update_reservation_flights", arguments={
        "reservation_id": "OWZ4XL", "cabin": "economy", "payment_id": "credit_card_9659780",
        "flights": [{"flight_number": f, "date": "2024-05-21"} for f in flights]})


def test_two_flight_changes_on_one_reservation_need_two_yeses() -> None:
    first, second = change("HAT202", "HAT232"), change("HAT041")
    b = ConversationBuilder().user(f"My user id is {AIR_USER}. Change reservation OWZ4XL to May 21.")
    b.tool("get_reservation_details", {"reservation_id": "OWZ4XL"}, RES).confirm(first.name, first.arguments)
    assert not confirmation_failed(gate("airline", first, b.build()))
    assert confirmation_failed(gate("airline", second, b.build()))  # states other flights
    b.tool(first.name, first.arguments, RES)
    # a repeat of the agreed update is the same change again (a no-op): the yes still covers it,
    # as the labelled real cases have it (tauguard/dialogue/data, case_type "repeat")
    assert not confirmation_failed(gate("airline", first, b.build()))
    b.confirm(second.name, second.arguments)
    assert not confirmation_failed(gate("airline", second, b.build()))


def test_several_bookings_each_need_their_own_yes() -> None:
    def booking(first_name: str) -> ToolCallView:
        return ToolCallView(name="book_reservation", arguments={
            "user_id": AIR_USER, "origin": "JFK", "destination": "SFO", "flight_type": "one_way", "cabin": "business",
            "flights": [{"flight_number": "HAT023", "date": "2024-05-26"}],
            "passengers": [{"first_name": first_name, "last_name": "Silva", "dob": "1960-11-26"}],
            "payment_methods": [{"payment_id": "credit_card_2198526", "amount": 500}], "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"})

    one, two = booking("Mohamed"), booking("Aarav")
    b = ConversationBuilder().user(f"My user id is {AIR_USER}. Book HAT023 for Mohamed and for Aarav, no insurance.")
    b.confirm(one.name, one.arguments)
    assert confirmation_failed(gate("airline", two, b.build()))  # states another passenger
    b.tool(one.name, one.arguments, {"reservation_id": "NEW001"})
    assert confirmation_failed(gate("airline", two, b.build()))
    assert confirmation_failed(gate("airline", one, b.build()))
    b.confirm(two.name, two.arguments)
    assert not confirmation_failed(gate("airline", two, b.build()))


@pytest.mark.parametrize(
    ("text", "value", "mentioned"),
    [
        ("Refund to credit_card_9659780?", "credit_card_9659780", True),
        ("Refund to your credit card ending in 9780?", "credit_card_9659780", True),
        ("Refund to your credit card ending in 1234?", "credit_card_9659780", False),
        ("Refund to your PayPal account?", "paypal_7644869", True),
        ("Refund to your gift card?", "paypal_7644869", False),
        ("Cabin: basic economy.", "basic_economy", True),
    ],
)
def test_payment_ids_and_codes_in_free_phrasing(text: str, value: str, mentioned: bool) -> None:
    assert mentions_value(text, value) is mentioned


# --- flown segments and compensation (action-guard) --------------------------------------


def cancelled_in_the_past(status: str | None) -> GuardDecision:
    res = dict(RES, flights=[{"flight_number": "HAT041", "origin": "EWR", "destination": "LAX", "date": "2024-05-11", "price": 120}])
    cancel = ToolCallView(name="cancel_reservation", arguments={"reservation_id": "OWZ4XL"})
    b = ConversationBuilder().user(f"My user id is {AIR_USER}. My flight was cancelled by the airline, cancel OWZ4XL.")
    b.tool("get_reservation_details", {"reservation_id": "OWZ4XL"}, res)
    if status is not None:
        b.tool("get_flight_status", {"flight_number": "HAT041", "date": "2024-05-11"}, status)
    return gate("airline", cancel, b.confirm(cancel.name, cancel.arguments).build())


def test_a_past_segment_the_airline_cancelled_is_not_flown() -> None:
    assert cancelled_in_the_past("cancelled").verdict == Verdict.ALLOW
    unread = cancelled_in_the_past(None)
    assert unread.verdict == Verdict.VERIFY and {r.tool for r in unread.required_reads} == {"get_flight_status"}
    landed = cancelled_in_the_past("landed")
    assert landed.verdict == Verdict.BLOCK and landed.rule_id == "airline.cancel_reservation.not_flown"


def test_certificate_waits_for_the_flight_status_then_needs_a_disruption() -> None:
    call = ToolCallView(name="send_certificate", arguments={"user_id": AIR_USER, "amount": 50})
    b = ConversationBuilder().user(f"My user id is {AIR_USER}. My flight in OWZ4XL was delayed, I want compensation.")
    b.tool("get_user_details", {"user_id": AIR_USER}, {"user_id": AIR_USER, "membership": "gold", "payment_methods": {}, "reservations": ["OWZ4XL"]})
    b.tool("get_reservation_details", {"reservation_id": "OWZ4XL"}, RES)
    first = gate("airline", call, b.confirm(call.name, call.arguments).build())
    assert first.verdict == Verdict.VERIFY and first.rule_id == "airline.send_certificate.reason"
    on_time = b.tool("get_flight_status", {"flight_number": "HAT041", "date": "2024-05-20"}, "on time")
    assert gate("airline", call, on_time.confirm(call.name, call.arguments).build()).verdict == Verdict.BLOCK
    delayed = b.tool("get_flight_status", {"flight_number": "HAT041", "date": "2024-05-20"}, "delayed")
    # a delay compensates only after the change or cancellation it is tied to (airline.compensation_delayed)
    untied = gate("airline", call, delayed.confirm(call.name, call.arguments).build())
    assert untied.verdict == Verdict.BLOCK and untied.rule_id == "airline.send_certificate.delay_after_change"
    cancelled = delayed.tool("cancel_reservation", {"reservation_id": "OWZ4XL"}, dict(RES, status="cancelled"))
    assert gate("airline", call, cancelled.confirm(call.name, call.arguments).build()).verdict == Verdict.ALLOW
