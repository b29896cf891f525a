"""Dialogue evidence: affirmative replies and the explicit-confirmation matching."""

from __future__ import annotations

import pytest

from tauguard_strategies.action_guard.builder import ConversationBuilder
from tauguard_strategies.action_guard.schema import domain_checklists
from tauguard_strategies.action_guard.dialogue import (
    find_confirmation,
    is_affirmative,
    is_negative,
    states_action,
)
from tauguard_strategies.action_guard.evidence import Evidence
from tauguard.conversation import ToolCallView

CANCEL = ToolCallView(id="w", name="cancel_pending_order", arguments={"order_id": "#W5199551", "reason": "no longer needed"})
SPEC = domain_checklists("retail")["cancel_pending_order"].statement


@pytest.mark.parametrize(
    "reply",
    ["Yes, I confirm.", "yes", "Yep, go ahead.", "Sure, please proceed.", "That's correct, go ahead", "No problem, go ahead.", "Please do."],
)
def test_affirmative_replies(reply: str) -> None:
    assert is_affirmative(reply)
    assert not is_negative(reply)


@pytest.mark.parametrize(
    "reply",
    ["No, please don't do that.", "Please do not do it", "I'm not sure.", "Wait, what is the price?", "Can you confirm the price first?", "Okay.", "Hmm."],
)
def test_non_affirmative_replies(reply: str) -> None:
    assert not is_affirmative(reply)


def _confirmed(builder: ConversationBuilder, call: ToolCallView = CANCEL) -> bool:
    return find_confirmation(Evidence.from_conversation(builder.build()), call, SPEC) is not None


def test_sim_phrasing_confirms() -> None:
    assert _confirmed(ConversationBuilder().confirm(CANCEL.name, CANCEL.arguments))


def test_free_phrasing_confirms_with_id_without_hash() -> None:
    b = ConversationBuilder().agent(
        "To confirm: I'll cancel order W5199551 (reason: no longer needed); the refund goes to your PayPal. Shall I go ahead?"
    ).user("Yes please, go ahead.")
    assert _confirmed(b)


def test_statement_of_another_order_does_not_confirm() -> None:
    b = ConversationBuilder().agent("I'll cancel order #W0000001. Do you confirm?").user("Yes.")
    assert not _confirmed(b)


def test_a_yes_before_the_statement_does_not_count() -> None:
    b = ConversationBuilder().user("Yes, cancel it.").agent("I will cancel order #W5199551 as no longer needed.")
    assert not _confirmed(b)


def test_an_intervening_question_breaks_the_pairing() -> None:
    b = (
        ConversationBuilder()
        .agent("I can cancel order #W5199551 for you.")
        .agent("Would you also like a copy of your receipt by email?")
        .user("Yes.")
    )
    assert not _confirmed(b)


def test_a_later_refusal_withdraws_an_earlier_yes() -> None:
    b = (
        ConversationBuilder()
        .confirm(CANCEL.name, CANCEL.arguments)
        .agent("Just to double-check: cancel order #W5199551, reason no longer needed?")
        .user("No, actually don't.")
    )
    assert not _confirmed(b)


def test_a_confirmation_is_consumed_by_executing_the_call() -> None:
    b = ConversationBuilder().confirm(CANCEL.name, CANCEL.arguments).tool(CANCEL.name, CANCEL.arguments, {"order_id": "#W5199551", "status": "cancelled"})
    assert not _confirmed(b)


def test_book_statement_needs_every_flight_number() -> None:
    spec = domain_checklists("airline")["book_reservation"].statement
    call = ToolCallView(name="book_reservation", arguments={"flights": [{"flight_number": "HAT136", "date": "2024-05-20"}, {"flight_number": "HAT039", "date": "2024-05-20"}]})
    assert states_action("I will book HAT136 and HAT039 on May 20 in economy. OK?", call, spec)
    assert not states_action("I will book HAT136 on May 20 in economy. OK?", call, spec)
