"""Precision content of the dialogue judge: negation and healthy statements in stated reasons;
deferrals, conditions and questions back never read as yes; amounts and payment splits compared
with what the user agreed. Variants written here, each with its negative."""

from __future__ import annotations

import pytest

from tauguard.dialogue import NEUTRAL, polarity, view_of
from tauguard.dialogue.amounts import agreed_amounts, amount_mismatch, stated_amounts
from tauguard.dialogue.reasons import reason_kind
from tauguard.strategy_api.conversation import ToolCallView
from tests.test_dialogue import Chat


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # the two statements
        ("I am healthy.", None),
        ("Nobody is sick, I just changed my mind.", "other"),
        # healthy-statements, however phrased: no illness stated
        ("We are all healthy, thanks.", None),
        ("My health is fine, I just found a cheaper flight.", "other"),
        ("Everyone is doing well.", None),
        ("I'm in good health, my plans changed.", "other"),
        # negation by a negated subject or frame anywhere before the concept in its clause
        ("None of us are ill; the trip was called off.", "other"),
        ("No one in my house is sick.", None),
        ("Neither of us is sick.", None),
        ("It's not that I'm sick, I changed my mind.", "other"),
        ("It has nothing to do with my health.", None),
        ("There is no storm, I just want a refund.", None),
        ("The weather is fine, I just changed my mind.", "other"),
        # negatives of the negatives: an illness stated stays health
        ("I'm not healthy enough to fly.", "health"),
        ("I don't feel well.", "health"),
        ("I can't travel because I'm sick.", "health"),
        ("I'm not able to travel with a broken leg.", "health"),
        ("No, I'm sick.", "health"),
        ("Everyone is fine, but my son broke his arm.", "health"),
        ("I'm fine with the fee. My wife is in hospital.", "health"),
        ("I'm not fine with the fee, my plans changed.", "other"),
        ("No one got hurt, but the storm flooded the road.", "weather"),
        ("The weather is terrible, a storm is coming.", "weather"),
    ],
)
def test_negated_and_healthy_statements_are_no_covered_reason(text: str, kind: str | None) -> None:
    assert reason_kind(text) == kind


def test_a_healthy_user_has_no_covered_reason_in_the_conversation() -> None:
    chat = Chat().agent("May I ask the reason for the cancellation?").user("Nobody is sick, I just changed my mind.")
    assert NEUTRAL.reason("airline", view_of(chat.conv), covered=True) is None
    assert NEUTRAL.reason("airline", view_of(chat.conv)).kind == "other"  # type: ignore[union-attr]
    chat.agent("I see.").user("Actually my daughter is sick now.")
    assert NEUTRAL.reason("airline", view_of(chat.conv), covered=True) is not None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # deferrals: the user decides later, after an act of their own
        ("Yes, but let me check with my wife first.", "conditional"),
        ("Sounds good, but I need to check my balance first.", "conditional"),
        ("Yes, once I check with my husband.", "conditional"),
        ("Let me talk to my wife and get back to you.", "conditional"),
        ("I will get back to you.", "conditional"),
        ("Okay, give me a moment.", "conditional"),
        ("Yes please, but wait until tomorrow to do it.", "conditional"),
        # conditions on what the agent tells first; questions back asking something first
        ("Yes, let me know the total first.", "conditional"),
        ("Sure, once you tell me the total.", "conditional"),
        ("Ok. Actually, can I first ask about the fee?", "conditional"),
        ("Yes — can you tell me the fee first?", "conditional"),
        # a yes-word under a negation is hesitation
        ("I am not sure yet.", "no"),
        ("That is not right.", "no"),
        # negatives: a yes with a follow-up that is no condition on this write stays a yes
        ("Yes, go ahead. I will let my wife know.", "yes"),
        ("Yes, cancel it. I will check the instructions once they arrive.", "yes"),
        ("Yes, go ahead. Please hold off on transferring me.", "yes"),
        ("Yes, and please check in my bag too.", "yes"),
        ("Yes, I want to confirm the booking.", "yes"),
        ("Yes, go ahead. Can you also email me the receipt?", "yes"),
        ("Yes, please make the flight changes first. Once that is done, let us look at upgrading.", "yes"),
    ],
)
def test_deferrals_conditions_and_questions_back_are_never_yes(reply: str, expected: str) -> None:
    assert polarity(reply) == expected


CERT = ToolCallView(name="send_certificate", arguments={"user_id": "u1", "amount": 200})
REFUEL = ToolCallView(name="refuel_data", arguments={"customer_id": "c", "line_id": "l", "gb_amount": 2})
SPLIT = ToolCallView(name="book_reservation", arguments={"payment_methods": [
    {"payment_id": "gift_card_1", "amount": 129}, {"payment_id": "credit_card_2", "amount": 242}]})


@pytest.mark.parametrize(
    ("reply", "call", "differs"),
    [
        ("Yes please, a $150 certificate is fine.", CERT, True),
        ("Yes, send the $150 voucher.", CERT, True),
        ("Yes, send the $200 certificate.", CERT, False),
        ("Yes. My fare was $350.", CERT, False),  # a fare, not the certificate
        ("Yes, add 3 GB please.", REFUEL, True),
        ("Yes, add 2 GB.", REFUEL, False),
        ("Yes, put $100 on the gift card and the rest on my Visa.", SPLIT, True),
        ("Yes, charge $200 to the gift card.", SPLIT, True),
        ("Yes, $129 on the gift card and $242 on my Visa.", SPLIT, False),
        ("Yes. My gift card balance is $129.", SPLIT, False),  # a balance is no share
        ("Yes, use the gift card with $300 first, then my Visa for the remaining balance.", SPLIT, False),
        ("So $371 total on the Visa. Yes.", SPLIT, False),  # a total is no share
        ("Yes, go ahead.", SPLIT, False),
    ],
)
def test_amounts_and_shares_the_reply_agrees_to_are_compared_with_the_write(reply: str, call: ToolCallView, differs: bool) -> None:
    assert (amount_mismatch(reply, call) is not None) == differs


def test_agreed_amounts_read_the_reply_first_and_attach_each_figure_to_its_method() -> None:
    said = agreed_amounts("Total $371: gift card $129, Mastercard $242. Shall I proceed?", "Yes")
    assert [(a.value, a.kind, a.share) for a in said] == [(371.0, "gift_card", False), (129.0, "gift_card", True), (242.0, "credit_card", True)]
    assert [a.value for a in agreed_amounts("A $200 certificate. OK?", "Yes, but make it $150.")] == [150.0]
    assert stated_amounts("Add 2 GB for $10") == stated_amounts("add 2 gb for $10")


def test_a_yes_naming_another_amount_is_rejected_by_the_amount_rule() -> None:
    chat = Chat().agent("I can send you a $200 travel certificate as compensation. Shall I send it?")
    chat.user("Yes please, a $150 certificate is fine.")
    finding = NEUTRAL.confirmation("airline", view_of(chat.conv), ToolCallView(id="w", name="send_certificate", arguments=CERT.arguments))
    assert not finding.confirmed
    why = finding.rejection
    assert why is not None and why.rule == "amount_mismatch" and why.detail == "the reply agrees to $150, the write moves $200"
    agreeing = Chat().agent("I can send you a $200 travel certificate as compensation. Shall I send it?").user("Yes please, $200 is fine.")
    assert NEUTRAL.confirmation("airline", view_of(agreeing.conv), ToolCallView(id="w", name="send_certificate",
                                                                                 arguments=CERT.arguments)).confirmed
