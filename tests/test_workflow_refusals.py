"""The workflow guide refuses what the policy forbids and names the read that decides an
unknown fact (issue 42), on the hand-written probes of ``bench/probes/handwritten.jsonl``:
an unmet eligibility the policy forbids is a BLOCK/REVISE under its item's clause, an unknown
fact a VERIFY naming its read, a route it cannot observe is never met, a flight change's
search is a search (not the reservation read), and a reservation the agent itself just
booked needs no read before it is cancelled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

PROBES = Path(__file__).resolve().parents[1] / "bench" / "probes" / "handwritten.jsonl"

# probe id -> (label first, label after the requested reads or None, rule id)
EXPECTED: dict[str, tuple[str, str | None, str | None]] = {
    # airline task 29: DTW-LGA round trip changed to DTW-JFK flights never searched
    "hand/airline/route-change-unsearched-VA5SGQ": ("verify", "refuse", "airline.same_route"),
    "hand/airline/route-change-searched-VA5SGQ": ("refuse", None, "airline.same_route"),
    "hand/airline/cancel-other-users-reservation": ("refuse", None, "airline.reservation_owner"),
    "hand/airline/cancel-no-basis-VAAOXJ": ("refuse", None, "airline.cancel_basis_intro"),
    "hand/airline/basic-economy-flight-change-Z30P1H": ("refuse", None, "airline.basic_economy_no_change"),
    "hand/airline/bags-decrease-NA6PZ3": ("refuse", None, "airline.no_bag_removal"),
    "hand/airline/passenger-removed-NA6PZ3": ("refuse", None, "airline.passenger_count"),
    "hand/airline/cabin-change-paid-by-certificate-VAAOXJ": ("refuse", None, "airline.change_payment_single"),
    "hand/retail/cancel-other-users-order": ("refuse", None, "retail.one_user"),
    "hand/retail/cancel-reason-not-allowed": ("refuse", None, "retail.cancel_reason_confirm"),
    "hand/retail/cancel-delivered-order": ("refuse", None, "retail.cancel_pending"),
    "hand/retail/return-pending-order": ("refuse", None, "retail.return_delivered"),
    "hand/retail/modify-payment-same-method": ("refuse", None, "retail.payment_single_different"),
    "hand/telecom/suspend-other-customers-line": ("refuse", None, "telecom.identify_customer"),
    "hand/telecom/refuel-over-max": ("refuse", None, "telecom.refuel_max"),
    "hand/telecom/resume-line-other-customer": ("refuse", None, "telecom.identify_customer"),
    # a yes to a statement without the price: a confirmation the dialogue judge decides (the
    # workflow's confirm step); the guide's own price step is advisory, so it is allowed
    "hand/telecom/refuel-no-price-stated": ("allow", None, None),
    "hand/airline/cancel-within-24h-JEPRZB": ("allow", None, None),
    "hand/airline/change-searched-same-route-VAAOXJ": ("allow", None, None),
    "hand/retail/cancel-own-order-no-longer-needed": ("allow", None, None),
    "hand/telecom/refuel-price-stated": ("allow", None, None),
    "hand/airline/cancel-own-new-booking-HATHAT": ("allow", None, None),
    "hand/airline/delay-certificate-after-the-change-LWTEDF": ("allow", None, None),
    # the amount and payment split the user agreed to (dialogue.agreed_payment), a payment
    # method never put to the user (dialogue.payment_named)
    "hand/airline/booking-split-charged-to-one-card": ("refuse", None, "airline.explicit_confirmation"),
    "hand/airline/booking-split-as-agreed": ("allow", None, None),
    "hand/airline/change-payment-never-named-VAAOXJ": ("verify", None, "airline.change_payment"),
}


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Any]:
    from tauguard.probes.evaluate import evaluate_probes
    from tauguard.probes.model import read_probes

    probes = read_probes(PROBES)
    assert sorted(p.id or "" for p in probes) == sorted(EXPECTED)
    return {o.probe_id: o for o in evaluate_probes("workflow", probes).outcomes}


@pytest.mark.parametrize("probe_id", sorted(EXPECTED))
def test_workflow_on_handwritten_probes(outcomes: dict[str, Any], probe_id: str) -> None:
    outcome = outcomes[probe_id]
    assert outcome.reproduced, outcome.replay_errors
    assert (outcome.predicted, outcome.predicted_after_reads, outcome.rule_id) == EXPECTED[probe_id], outcome.reason


def test_an_unobserved_route_is_missing_and_names_the_searches() -> None:
    import json

    from tauguard_strategies.action_guard.checks import CHECKS
    from tauguard_strategies.action_guard.checks.base import CheckContext
    from tauguard_strategies.action_guard.evidence import Evidence
    from tauguard_strategies.action_guard.schema import domain_checklists
    from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView

    read = ToolCallView(id="r", name="get_reservation_details", arguments={"reservation_id": "R1"})
    reservation = {"reservation_id": "R1", "origin": "DTW", "destination": "LGA", "flight_type": "one_way",
                   "flights": [{"flight_number": "HAT035", "origin": "DTW", "destination": "LGA", "date": "2024-05-17"}]}
    conv = Conversation()
    conv.add(ConversationEvent(kind="agent_tool_call", tool_call=read))
    conv.add(ConversationEvent(kind="tool_result", tool_call=read, content=json.dumps(reservation)))
    call = ToolCallView(id="w", name="update_reservation_flights",
                        arguments={"reservation_id": "R1", "flights": [{"flight_number": "HAT169", "date": "2024-05-17"}]})
    checklist = domain_checklists("airline")["update_reservation_flights"]
    ctx = CheckContext(domain="airline", call=call, checklist=checklist, evidence=Evidence.from_conversation(conv))
    outcome = CHECKS.get("airline.route_unchanged")(ctx)
    assert outcome.status == "missing"  # never "met" on a route no result showed
    assert [r.tool for r in outcome.required_reads] == ["search_direct_flight", "search_onestop_flight"]
    # the same flight on the reservation's own route, observed: met
    unchanged = ToolCallView(id="w", name="update_reservation_flights", arguments={"reservation_id": "R1", "flights": [{"flight_number": "HAT035", "date": "2024-05-17"}]})
    ctx = CheckContext(domain="airline", call=unchanged, checklist=checklist, evidence=Evidence.from_conversation(conv))
    assert CHECKS.get("airline.route_unchanged")(ctx).status == "met"


@pytest.mark.parametrize("strategy", ["ledger", "action-guard"])
def test_a_delay_certificate_right_after_the_change_that_removed_the_delayed_flight(strategy: str) -> None:
    # LWTEDF's HAT002 is delayed today; the agent moves it to tomorrow, then the user asks for
    # compensation: the delayed flight is no longer in the reservation, but the agent read it
    # delayed before the change that qualifies the certificate
    from tauguard.probes.evaluate import evaluate_probes
    from tauguard.probes.model import read_probes

    probe = [p for p in read_probes(PROBES) if p.id == "hand/airline/delay-certificate-after-the-change-LWTEDF"]
    (outcome,) = evaluate_probes(strategy, probe).outcomes
    assert outcome.reproduced and outcome.predicted == "allow", outcome.reason


@pytest.mark.parametrize("probe_id, label, rule", [
    ("hand/airline/booking-split-charged-to-one-card", "refuse", "airline.book_reservation.agreed_payment"),
    ("hand/airline/booking-split-as-agreed", "allow", None),
    ("hand/airline/change-payment-never-named-VAAOXJ", "verify", "airline.update_reservation_flights.payment_named"),
])
def test_the_action_guard_checks_the_agreed_payment_and_that_a_method_was_named(probe_id: str, label: str, rule: str | None) -> None:
    from tauguard.probes.evaluate import evaluate_probes
    from tauguard.probes.model import read_probes

    (outcome,) = evaluate_probes("action-guard", [p for p in read_probes(PROBES) if p.id == probe_id]).outcomes
    assert outcome.reproduced and (outcome.predicted, outcome.rule_id) == (label, rule), outcome.reason


_PROFILE = {"user_id": "u1", "membership": "gold", "payment_methods": {
    "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "amount": 300.0},
    "credit_card_2": {"source": "credit_card", "id": "credit_card_2", "brand": "visa", "last_four": "4321"}}}


@pytest.mark.parametrize("statement, charged, held", [
    # a split the user agreed to, by id or by the card's last four digits, charged to one method
    ("I will book it: $100 on gift_card_1 and $116 on credit_card_2. Do you confirm?", [("credit_card_2", 216)], True),
    ("Payment: Visa ending 4321: $116; gift_card_1: $100. Shall I go ahead?", [("gift_card_1", 216)], True),
    ("I will charge $100 from gift_card_1, and the remaining $116 from your Visa ending in 4321. OK?", [("credit_card_2", 216)], True),
    # the split as agreed; a share the statement gives another amount
    ("I will book it: $100 on gift_card_1 and $116 on credit_card_2. Do you confirm?", [("gift_card_1", 100), ("credit_card_2", 116)], False),
    # whether each share of a split call was said is the dialogue judge's, not this check's
    ("I will book it: $100 on gift_card_1 and $116 on credit_card_2. Do you confirm?", [("gift_card_1", 116), ("credit_card_2", 100)], False),
    # balances are not shares ("gift_card_1 with $300", "$300 balance")
    ("Payment: your gift cards (gift_card_1 with $300 and credit_card_2 with $50 limit) for $216. OK?", [("gift_card_1", 216)], False),
    ("Payment: gift card (gift_card_1, $300 balance) first, then Visa (credit_card_2) for the remaining $116. OK?", [("gift_card_1", 100), ("credit_card_2", 116)], False),
    # one method with its amount; the other only mentioned (no share): not a split
    ("I will book it for $216 on credit_card_2 (your gift_card_1 has $300 left). Do you confirm?", [("credit_card_2", 216)], False),
])
def test_the_agreed_split_is_the_one_charged(statement: str, charged: list[tuple[str, int]], held: bool) -> None:
    from tauguard_strategies.action_guard.builder import ConversationBuilder
    from tauguard_strategies.action_guard.checks import CHECKS
    from tauguard_strategies.action_guard.checks.base import CheckContext
    from tauguard_strategies.action_guard.evidence import Evidence
    from tauguard_strategies.action_guard.schema import domain_checklists
    from tauguard.strategy_api.conversation import ToolCallView

    call = ToolCallView(id="w", name="book_reservation", arguments={
        "user_id": "u1", "origin": "CLT", "destination": "MCO", "flight_type": "one_way", "cabin": "economy",
        "flights": [{"flight_number": "HAT287", "date": "2024-05-24"}], "passengers": [{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}],
        "payment_methods": [{"payment_id": p, "amount": a} for p, a in charged], "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"})
    conv = (ConversationBuilder().user("Hi, I'm u1, book HAT287 on May 24 for me.").tool("get_user_details", {"user_id": "u1"}, _PROFILE)
            .agent("I will book HAT287 on 2024-05-24 in economy for A B, one way CLT to MCO. " + statement).user("Yes.").build())
    ctx = CheckContext(domain="airline", call=call, checklist=domain_checklists("airline")["book_reservation"],
                       evidence=Evidence.from_conversation(conv))
    outcome = CHECKS.get("dialogue.agreed_payment")(ctx)
    assert (outcome.status == "violated") == held, outcome.detail
