"""Every rule of the compiled dialogue judge has a name, a one-line doc and a case it fires on; a pair
the judge does not take carries ``Rejection(rule, detail)`` (tauguard/dialogue/rules.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tauguard.dialogue import NEUTRAL, view_of
from tauguard.dialogue.cases import load_cases
from tauguard.dialogue.evaluate import _Conversations, judge_case_why
from tauguard.dialogue.rules import RULES, Rejection, rejection
from tauguard.dialogue.sealed import sealed_files
from tauguard.strategy_api.conversation import ToolCallView
from tests.test_dialogue import RES, Chat

SHARED = next((p / "shared" / "trajectories" for p in Path(__file__).resolve().parents if (p / "shared" / "trajectories").is_dir()),
              Path("/nonexistent"))

# A labelled case of a development file (never a sealed one) whose pair each rule rejects.
REAL_EXAMPLES = {
    "reply_not_yes": "airline_adaptive-agent_cascata_tau3tasks:10:22:0:2",
    "no_go_ahead_asked": "airline_adaptive-agent_cascata_tau3tasks:15:20:0:2",
    "arguments_not_conveyed": "airline_adaptive-agent_cascata_tau3tasks:7:24:0:18",
    "payment_contradicted": "airline_adaptive-agent_cascata_tau3tasks:20:39:0:33",
    "go_ahead_deferred": "retail_gpt-4.1-mini_user-gpt-4.1:3:14:0:2",
    "action_not_named": "airline_adaptive-agent_cascata_tau3tasks:17:32:0:26",
    "options_not_singled_out": "airline_adaptive-agent_cascata_tau3tasks:21:35:0:31",
    "changed_later": "airline_adaptive-agent_cascata_tau3tasks:17:24:0:20",
    "questionnaire": "airline_adaptive-agent_opus46_tau3tasks:22:19:0:15",
    "payment_split_unstated": "airline_adaptive-agent_cascata_tau3tasks:23:36:0:2",
    "target_disputed": "retail_gpt-4.1-mini_user-gpt-4.1:73:12:0:10",
}
# Rules shown on conversations written here (each test below names its rule).
SYNTHETIC = {"no_pair", "used_up", "withdrawn_later", "superseded_by_revision", "payment_settled_later", "amount_mismatch"}


def _why(chat: Chat, domain: str, name: str, arguments: dict) -> Rejection | None:
    return NEUTRAL.confirmation(domain, view_of(chat.conv), ToolCallView(id="w", name=name, arguments=arguments)).rejection


def test_every_rule_has_a_name_a_one_line_doc_and_an_example() -> None:
    for name, doc in RULES.items():
        assert name.isidentifier() and doc and "\n" not in doc and len(doc) < 140, name
    assert set(REAL_EXAMPLES) | SYNTHETIC == set(RULES)
    with pytest.raises(KeyError):
        rejection("no_such_rule")


def test_real_examples_are_development_cases() -> None:
    cases = {c.id: c for c in load_cases()}
    for case_id in REAL_EXAMPLES.values():
        assert cases[case_id].source.file not in sealed_files(), case_id


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/trajectories")
@pytest.mark.parametrize(("rule", "case_id"), sorted(REAL_EXAMPLES.items()))
def test_each_rule_rejects_its_real_example(rule: str, case_id: str) -> None:
    case = next(c for c in load_cases() if c.id == case_id)
    confirmed, why = judge_case_why(NEUTRAL, case, _Conversations([SHARED]).messages(case))
    assert not confirmed and why is not None and why.rule == rule, why
    assert case.label == "not_confirmed"


BAGS = {"reservation_id": "ABC123", "total_baggages": 2, "nonfree_baggages": 0, "payment_id": "credit_card_1"}


def test_a_finding_without_any_pair_says_so() -> None:
    why = _why(Chat(), "airline", "update_reservation_baggages", BAGS)
    assert why is not None and why.rule == "no_pair" and why.statement_at is None


def test_the_rejection_names_what_was_not_conveyed_and_where() -> None:
    chat = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    chat.agent("Shall I update the checked bags on your reservation?").user("Yes, please.")
    finding = NEUTRAL.confirmation("airline", view_of(chat.conv), ToolCallView(id="w", name="update_reservation_baggages", arguments=BAGS))
    why = finding.rejection
    assert why is not None and why.rule == "arguments_not_conveyed" and "total_baggages=" in why.detail
    assert finding.rejection_of(why.statement_at or 0, why.reply_at or 0) == why
    assert why.says().startswith("arguments_not_conveyed: not conveyed:")


def test_the_rejection_for_feedback_is_the_latest_pair_about_a_go_ahead() -> None:
    chat = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    chat.agent("Shall I update the checked bags on your reservation?").user("Yes, please.")
    chat.agent("What is your email?").user("It is a@b.c")  # no go-ahead asked, no yes or no said
    why = _why(chat, "airline", "update_reservation_baggages", BAGS)
    assert why is not None and why.rule == "arguments_not_conveyed"
    chat.agent("I will set the checked bags of ABC123 to 2. Shall I proceed?").user("No, leave it.")
    why = _why(chat, "airline", "update_reservation_baggages", BAGS)
    assert why is not None and why.rule == "reply_not_yes" and why.detail == "the reply reads as no"


def test_a_later_refusal_withdraws_the_yes() -> None:
    chat = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    chat.agent("I will set the checked bags of ABC123 to 2. Shall I proceed?").user("Yes.")
    assert _why(chat, "airline", "update_reservation_baggages", {"reservation_id": "ABC123", "total_baggages": 2}) is None
    chat.agent("Before I do: the second bag is free with your membership.").user("No, don't do it after all.")
    finding = NEUTRAL.confirmation("airline", view_of(chat.conv), ToolCallView(
        id="w", name="update_reservation_baggages", arguments={"reservation_id": "ABC123", "total_baggages": 2}))
    first = finding.rejections[0]  # the yes pair
    assert first.rule == "withdrawn_later" and "reads as no" in first.detail, finding.rejections


def test_a_yes_used_by_an_identical_creation_is_used_up() -> None:
    chat = Chat().agent("I can send you a $200 travel certificate as compensation. Shall I send it?").user("Yes please.")
    chat.call("send_certificate", {"user_id": "u1", "amount": 200}, '"Certificate certificate_1 added"')
    why = _why(chat, "airline", "send_certificate", {"user_id": "u1", "amount": 200})
    assert why is not None and why.rule == "used_up"


FLIGHTS = [{"flight_number": "HAT001", "date": "2024-05-20"}, {"flight_number": "HAT002", "date": "2024-05-25"}]


def test_a_revised_plan_after_a_failure_supersedes_the_yes() -> None:
    profile = ('{"user_id": "u1", "name": {"first_name": "Ana", "last_name": "Lee"}, "payment_methods": {'
               '"gift_card_1": {"source": "gift_card", "id": "gift_card_1"}, '
               '"credit_card_2": {"source": "credit_card", "id": "credit_card_2", "brand": "mastercard", "last_four": "9363"}}}')
    booking = {"user_id": "u1", "cabin": "economy", "flights": FLIGHTS, "passengers": [{"first_name": "Ana", "last_name": "Lee"}],
               "payment_methods": [{"payment_id": "gift_card_1", "amount": 300}, {"payment_id": "credit_card_2", "amount": 71}]}
    chat = Chat().call("get_user_details", {"user_id": "u1"}, profile)
    chat.agent("Booking — Ana Lee ($371): gift card $300, Mastercard $71, on HAT001 and HAT002 in economy. "
               "Please confirm with yes to proceed.").user("Yes, go ahead.")
    assert _why(chat, "airline", "book_reservation", booking) is None
    chat.call("book_reservation", booking, "Error: gift card balance is not enough", error=True)
    chat.agent("The gift card balance is lower. Revised: Ana Lee ($371): all $371 on the Mastercard, on HAT001 and "
               "HAT002 in economy. Shall I proceed with this revised booking?").user("Okay, go ahead.")
    # the agent retries the old split: the first yes was superseded, the second states another payment
    finding = NEUTRAL.confirmation("airline", view_of(chat.conv), ToolCallView(id="w", name="book_reservation", arguments=booking))
    assert not finding.confirmed
    assert finding.rejections[0].rule == "superseded_by_revision"


_TWO_CARDS = ('{"user_id": "u1", "payment_methods": {'
              '"credit_card_111": {"source": "credit_card", "id": "credit_card_111", "brand": "visa", "last_four": "1001"}, '
              '"credit_card_222": {"source": "credit_card", "id": "credit_card_222", "brand": "mastercard", "last_four": "2002"}}}')


def test_a_payment_changed_in_the_reply_and_put_again_is_settled_later() -> None:
    args = {"reservation_id": "ABC123", "cabin": "business", "flights": FLIGHTS, "payment_id": "credit_card_222"}
    chat = Chat().call("get_user_details", {"user_id": "u1"}, _TWO_CARDS)
    chat.call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    chat.agent("For ABC123 I will upgrade the cabin to business for $300, charged to your Visa ending in 1001. Shall I proceed?")
    chat.user("Yes, go ahead, but charge it to my card ending in 2002.")
    chat.agent("Updated: ABC123 to business for $300 on the Mastercard ending in 2002. Please confirm.").user("Confirmed.")
    finding = NEUTRAL.confirmation("airline", view_of(chat.conv), ToolCallView(id="w", name="update_reservation_flights", arguments=args))
    assert [r.rule for r in finding.rejections if r.rule == "payment_settled_later"] == ["payment_settled_later"]
