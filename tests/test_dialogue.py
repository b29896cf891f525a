"""The neutral dialogue judge: polarity, statement coverage, summaries, pairing, reasons.

Reply and statement texts marked with a case id are quoted from the labelled real exchanges in
``tauguard/dialogue/data`` (the id is the provenance: file-stem:sim:write-msg:call:statement-msg).
"""

from __future__ import annotations

import pytest

from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.dialogue import NEUTRAL, asks_go_ahead, polarity, view_of
from tauguard.dialogue.cases import load_cases
from tauguard.dialogue.evaluate import judge_case
from tauguard.dialogue.reasons import reason_kind


class Chat:
    """A conversation built turn by turn (tool results as JSON strings)."""

    def __init__(self) -> None:
        self.conv = Conversation()
        self.n = 0

    def agent(self, text: str) -> Chat:
        self.conv.add(ConversationEvent(kind="agent_message", content=text))
        return self

    def user(self, text: str) -> Chat:
        self.conv.add(ConversationEvent(kind="user_message", content=text))
        return self

    def call(self, name: str, arguments: dict, result: str = "{}", error: bool = False) -> Chat:
        self.n += 1
        call = ToolCallView(id=f"c{self.n}", name=name, arguments=arguments)
        self.conv.add(ConversationEvent(kind="agent_tool_call", tool_call=call))
        self.conv.add(ConversationEvent(kind="tool_result", tool_call=call, content=result, error=error))
        return self

    def confirmed(self, domain: str, name: str, arguments: dict) -> bool:
        return NEUTRAL.confirmation(domain, view_of(self.conv), ToolCallView(id="w", name=name, arguments=arguments)).confirmed


# --------------------------------------------------------------------------- polarity


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # airline_adaptive-agent_cascata_tau3tasks:40:18:0:16 (a yes after a sigh, in French)
        ("Ah, c'est dommage... I understand, the policy is the policy.   Oui, please go ahead and cancel those three "
         "reservations then. Merci beaucoup!", "yes"),
        # airline_adaptive-agent_cascata_tau3tasks:14:36:0:30 (a "no" about insurance, then the yes)
        ("No insurance needed, thanks. So just to confirm — my Mastercard would be charged $1,786? That's under $2,000, "
         "so let's go ahead with it. Please cancel the current reservation and rebook with those flights and that payment breakdown.", "yes"),
        # airline_adaptive-agent_cascata_tau3tasks:21:27:0:25 ("wait" adding a request, not withdrawing)
        ("Yes, please go ahead! Oh wait — I also need to add one more checked bag. Can you do that as well?", "yes"),
        # airline_adaptive-agent_cascata_tau3tasks:25:35:0:31 (hesitation)
        ("Wait, hold on — if the cancellation refunds $567 to gift_card_6136092, that changes things. Let me think about this...", "no"),
        # airline_adaptive-agent_cascata_tau3tasks:11:20:0:16 (a question back about the terms)
        ("Thanks for clarifying. Since I can't upgrade just one passenger, I'll keep both passengers in economy for now. "
         "Please go ahead and add 2 checked bags under my name using my Gold membership. Also, could you confirm that "
         "there won't be any fees for the bags?", "question"),
        # airline_adaptive-agent_opus46_tau3tasks:37:26:0:22 (agrees to less than was put to them)
        ("Hmm, wait — I see that SE9KEL has two other passengers, Ivan Brown and Emma Li. I don't want to cancel that one "
         "if it affects their travel. So let's just go ahead with cancelling FDZ0T5 and HSR97W.", "conditional"),
        ("Yes, if it's refundable.", "conditional"),
        ("Only if the refund goes to my Visa.", "conditional"),
        ("What would the refund be?", "question"),
        ("My email is a@b.c", "none"),
    ],
)
def test_polarity_of_real_replies(reply: str, expected: str) -> None:
    assert polarity(reply) == expected


# The example: retail task 66 (cancel #W3361211, "no longer needed"), ten reply variants.
TASK_66 = {"order_id": "#W3361211", "reason": "no longer needed"}
STATEMENT_66 = "I will cancel order #W3361211 (reason: no longer needed); the refund goes to your original payment method. Shall I proceed?"


@pytest.mark.parametrize(
    ("reply", "confirms"),
    [
        ("Yes.", True),
        ("Sounds good.", True),
        ("Absolutely, please cancel it.", True),
        ("No problem, go ahead.", True),
        ("Oui, allez-y.", True),
        ("Hmm, okay — yes, cancel it.", True),
        ("No, please don't do that.", False),
        ("Only if the refund is immediate.", False),
        ("How long will the refund take before I decide?", False),
        ("Wait, I want to keep it after all.", False),
    ],
)
def test_task_66_ten_reply_variants(reply: str, confirms: bool) -> None:
    chat = Chat().call("get_order_details", {"order_id": "#W3361211"}, '{"order_id": "#W3361211", "status": "pending"}')
    assert chat.agent(STATEMENT_66).user(reply).confirmed("retail", "cancel_pending_order", TASK_66) is confirms


def test_task_66_a_yes_to_the_reason_question_is_no_confirmation() -> None:
    # the rubric used to pass this write: the agent asked about the reason, not for the go-ahead
    chat = Chat().agent("So the item is no longer needed, right?").user("Yes.")
    assert not chat.confirmed("retail", "cancel_pending_order", TASK_66)


def test_sim_user_and_sim_agent_phrasing() -> None:
    from tauguard.sim import texts

    assert asks_go_ahead(texts.confirm_request("cancel_pending_order", TASK_66))
    assert polarity(texts.USER_YES) == "yes" and polarity(texts.USER_NO) == "no"
    assert polarity("No problem, go ahead.") == "yes"  # the sim agent used to read this as a refusal


# --------------------------------------------------------------------------- statements


RES = '{"reservation_id": "%s", "user_id": "u1", "cabin": "%s", "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}, {"flight_number": "HAT002", "date": "2024-05-25"}], "total_baggages": 1, "passengers": [{"first_name": "Ana", "last_name": "Lee"}]}'


def test_a_reference_to_the_one_reservation_in_discussion_conveys_its_id() -> None:
    chat = Chat().user("I want to cancel ABC123.").call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "business"))
    chat.agent("Your reservation is business class, so it can be cancelled with a full refund. Shall I go ahead and cancel it?")
    assert chat.user("Yes please.").confirmed("airline", "cancel_reservation", {"reservation_id": "ABC123"})


def test_a_statement_naming_another_reservation_does_not_cover_this_one() -> None:
    chat = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "business"))
    chat.call("get_reservation_details", {"reservation_id": "XYZ789"}, RES % ("XYZ789", "business"))
    chat.agent("Shall I cancel reservation XYZ789?").user("Yes.")
    assert not chat.confirmed("airline", "cancel_reservation", {"reservation_id": "ABC123"})


def test_unchanged_flights_and_cabin_need_not_be_repeated() -> None:
    args = {"reservation_id": "ABC123", "cabin": "economy", "flights": [{"flight_number": "HAT001", "date": "2024-05-20"},
                                                                    {"flight_number": "HAT009", "date": "2024-05-26"}]}
    chat = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    chat.agent("For ABC123 I will replace the return flight with HAT009 on May 26; the outbound stays. Shall I proceed?")
    assert chat.user("Yes, go ahead.").confirmed("airline", "update_reservation_flights", args)


def test_a_menu_of_flights_does_not_state_the_change() -> None:
    # airline_adaptive-agent_cascata_tau3tasks:29:22:0:18: "Which direct flight would you prefer - HAT175 or HAT266?"
    args = {"reservation_id": "ABC123", "cabin": "economy", "flights": [{"flight_number": "HAT001", "date": "2024-05-20"},
                                                                    {"flight_number": "HAT266", "date": "2024-05-19"}]}
    chat = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    chat.agent("For ABC123, please confirm: 1. Which flight you prefer (HAT175 or HAT266) 2. That you want to proceed with the flight change")
    assert not chat.user("I'd like to go with HAT266, please. And yes, I'd like to proceed.").confirmed("airline", "update_reservation_flights", args)


def test_a_detail_question_is_not_a_request_for_the_go_ahead() -> None:
    # airline_adaptive-agent_opus46_tau3tasks:27:19:0:15: "Which would you like to use for the refund?"
    assert not asks_go_ahead("To process this change, I'll need a gift card or credit card for the refund. Which would you like to use for the refund?")
    assert asks_go_ahead('Please reply with **"yes"** if you would like me to finalize this booking.')
    assert not asks_go_ahead("Would you like me to check if there are any cancellation options for this reservation instead?")


# --------------------------------------------------------------------------- summaries and pairing


def test_one_yes_to_a_summary_covers_every_write_it_lists() -> None:
    chat = Chat()
    for rid in ("AAA111", "BBB222"):
        chat.call("get_reservation_details", {"reservation_id": rid}, RES % (rid, "business"))
    # airline_adaptive-agent_cascata_tau3tasks:42:36:0:34
    chat.agent('Both AAA111 and BBB222 are eligible for cancellation. Please confirm with "yes" if you want me to proceed with cancelling both reservations.')
    chat.user("Yes, please proceed with cancelling both reservations.")
    assert chat.confirmed("airline", "cancel_reservation", {"reservation_id": "AAA111"})
    chat.call("cancel_reservation", {"reservation_id": "AAA111"}, '{"status": "cancelled"}')
    assert chat.confirmed("airline", "cancel_reservation", {"reservation_id": "BBB222"})


def test_a_payment_question_between_the_summary_and_the_yes_keeps_the_pairing() -> None:
    args = {"reservation_id": "ABC123", "cabin": "business", "flights": [{"flight_number": "HAT001", "date": "2024-05-20"},
                                                                     {"flight_number": "HAT002", "date": "2024-05-25"}],
            "payment_id": "credit_card_1111777"}
    chat = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    chat.agent("Upgrading ABC123 to business on HAT001 and HAT002 costs $396. Which card should I charge?")
    chat.user("My Visa ending in 1777.")
    chat.agent("Thanks. Shall I go ahead and charge the Visa ending in 1777?")
    assert chat.user("Yes, go ahead.").confirmed("airline", "update_reservation_flights", args)


def test_a_change_of_details_after_the_yes_ends_the_confirmation() -> None:
    chat = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    chat.agent("I will set the checked bags of ABC123 to 2. Shall I proceed?").user("Yes.")
    assert chat.confirmed("airline", "update_reservation_baggages", {"reservation_id": "ABC123", "total_baggages": 2})
    chat.user("Actually, make it 3 bags instead.")
    assert not chat.confirmed("airline", "update_reservation_baggages", {"reservation_id": "ABC123", "total_baggages": 2})


def test_a_yes_that_created_something_is_used_up() -> None:
    # airline_gpt-oss-120b_user-gpt-oss-120b:6:23:0:18: a second certificate after the agreed one was issued
    chat = Chat().agent("I can send you a $200 travel certificate as compensation. Shall I send it?").user("Yes please.")
    assert chat.confirmed("airline", "send_certificate", {"user_id": "u1", "amount": 200})
    chat.call("send_certificate", {"user_id": "u1", "amount": 200}, '"Certificate certificate_1 added"')
    assert not chat.confirmed("airline", "send_certificate", {"user_id": "u1", "amount": 200})


def test_telecom_refuel_is_the_only_telecom_write_needing_a_yes() -> None:
    finding = NEUTRAL.confirmation("telecom", view_of(Conversation()), ToolCallView(name="enable_roaming", arguments={}))
    assert not finding.needed
    chat = Chat().agent("Adding 2 GB of data costs $4.00. Shall I refuel 2 GB?").user("Sure.")
    assert chat.confirmed("telecom", "refuel_data", {"customer_id": "c", "line_id": "l", "gb_amount": 2})


# --------------------------------------------------------------------------- reasons


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # airline_adaptive-agent_cascata_tau3tasks:18:22:0:14
        ("Yes, please check if I can cancel this reservation using my travel insurance. I'm not feeling well and would "
         "prefer to cancel the trip and book again later.", "health"),
        ("I've been under the weather all week.", "health"),
        ("My daughter came down with the flu.", "health"),
        ("I broke my ankle skiing.", "health"),
        ("There's a hurricane heading for Miami.", "weather"),
        ("I'm not sick, my plans just changed.", "other"),
        ("Please cancel it.", None),
    ],
)
def test_reasons_by_meaning(text: str, kind: str | None) -> None:
    assert reason_kind(text) == kind


def test_covered_reason_found_in_the_conversation() -> None:
    chat = Chat().user("I need to cancel, my plans changed.").agent("I see.").user("Honestly I'm also not feeling well.")
    found = NEUTRAL.reason("airline", view_of(chat.conv), covered=True)
    assert found is not None and found.kind == "health" and "not feeling well" in found.text
    assert NEUTRAL.reason("airline", view_of(chat.conv)).kind == "other"  # type: ignore[union-attr]


# --------------------------------------------------------------------------- the packaged cases


def test_packaged_cases_validate_and_cover_every_confirmed_write() -> None:
    from tauguard.domains.contract import confirmed_tools

    cases = load_cases()
    assert len(cases) >= 300
    assert len({c.id for c in cases}) == len(cases)
    assert all(c.label is not None and c.case_type is not None and c.why for c in cases)
    for case in cases:
        assert case.write.name in confirmed_tools(case.domain), case.id
        assert case.statement.message_index < case.reply.message_index < case.write.message_index, case.id
    kinds = {c.case_type for c in cases}
    assert {"different_question", "conditional", "changed_after", "summary"} <= kinds


def test_real_cases_judged_on_their_own_exchange() -> None:
    cases = {c.id: c for c in load_cases()}
    for cid in ("airline_adaptive-agent_cascata_tau3tasks:40:18:0:16", "airline_adaptive-agent_cascata_tau3tasks:42:36:0:34"):
        assert judge_case(NEUTRAL, cases[cid], None), cid
    # cascata 21:27:0:21 and opus46 37:26:0:22 were pinned here too, until the blind adjudication of
    # 2026-12-06 relabelled them confirmed (tauguard/dialogue/adjudication)
    for cid in ("airline_adaptive-agent_cascata_tau3tasks:25:35:0:31",):
        assert cases[cid].label == "not_confirmed" and not judge_case(NEUTRAL, cases[cid], None), cid


# --------------------------------------------------------------------------- calibration phenomena (compiled/2)


def test_a_json_agent_message_is_read_whole() -> None:
    # retail_gpt-4.1-mini_user-gpt-4.1:33:16:0:14: the request for a yes sits in a field of its own
    text = ('{"message": "I found order #W6239298.", "confirmation_prompt": "Please reply \'yes\' to return the Bookshelf '
            '(4900661478) from #W6239298 and refund to credit_card_2112420."}')
    chat = Chat().call("get_order_details", {"order_id": "#W6239298"}, '{"order_id": "#W6239298", "status": "delivered"}')
    chat.agent(text).user("Yes please, return the Bookshelf.")
    args = {"order_id": "#W6239298", "item_ids": ["4900661478"], "payment_method_id": "credit_card_2112420"}
    assert chat.confirmed("retail", "return_delivered_order_items", args)


def test_a_condition_on_another_write_of_the_summary_does_not_bind_this_one() -> None:
    # retail_gpt-4.1-mini_user-gpt-4.1:21:18:0:13: the condition is about a price difference; the address change has none
    chat = Chat().call("get_order_details", {"order_id": "#W1111111"}, '{"order_id": "#W1111111", "status": "pending"}')
    chat.agent("For #W1111111 I will 1) change the shipping address to 12 Oak Street, 10001 and 2) swap the watch to black. "
               "Shall I proceed with both?")
    chat.user("Yes, please proceed with both. If the price difference is more than my gift card balance, please pause and let me know.")
    address = {"order_id": "#W1111111", "address1": "12 Oak Street", "zip": "10001"}
    assert chat.confirmed("retail", "modify_pending_order_address", address)
    refusal = Chat().call("get_order_details", {"order_id": "#W1111111"}, '{"order_id": "#W1111111", "status": "pending"}')
    refusal.agent("For #W1111111 I will change the shipping address to 12 Oak Street, 10001. Shall I proceed?")
    # (compiled/5) an "if" that only asks to be told should an exception arise leaves the yes standing;
    # one whose consequence changes the action still conditions it
    assert not refusal.user("Yes. If the delivery date changes, use my old address instead.").confirmed(
        "retail", "modify_pending_order_address", address)


def test_refusing_one_target_of_a_batch_changes_the_batch() -> None:
    # dropping one of three cancellations without saying which go ahead needs a new statement
    chat = Chat()
    for rid in ("FDZ0T5", "HSR97W", "SE9KEL"):
        chat.call("get_reservation_details", {"reservation_id": rid}, RES % (rid, "business"))
    chat.agent("Shall I cancel FDZ0T5, HSR97W and SE9KEL?")
    chat.user("Hmm, wait, SE9KEL has other passengers. Let's just go ahead with the other two.")
    assert not chat.confirmed("airline", "cancel_reservation", {"reservation_id": "FDZ0T5"})
    # (compiled/6) naming the ones that go ahead agrees to each of them (airline_adaptive-agent_opus46_tau3tasks:37:26:0:22,
    # relabelled confirmed by the blind adjudication of 2026-12-06); see tests/test_dialogue_rules.py
    # a question about the others does not touch the ones agreed (airline_ironshell_opus46_run1:39:18:0:16)
    chat.agent("Would you like me to go ahead and cancel FDZ0T5 and HSR97W?")
    chat.user("Oui, please go ahead and cancel both FDZ0T5 and HSR97W. For the others, I still want to release my seats. Is that possible?")
    assert chat.confirmed("airline", "cancel_reservation", {"reservation_id": "FDZ0T5"})


def test_the_option_the_agent_singles_out_of_a_list_is_stated() -> None:
    # airline_adaptive-agent_cascata_tau3tasks:15:20:0:18
    args = {"reservation_id": "ABC123", "cabin": "economy", "flights": [{"flight_number": "HAT110", "date": "2024-05-24"},
                                                                    {"flight_number": "HAT172", "date": "2024-05-24"}]}
    chat = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    chat.agent("Options for ABC123:\n1. HAT110 + HAT172: $207\n2. HAT164 + HAT206: $290\n\n"
               "The cheapest option is HAT110 + HAT172 for $207. Would you like to proceed with this change?")
    assert chat.user("Yes, I confirm.").confirmed("airline", "update_reservation_flights", args)
    menu = Chat().call("get_reservation_details", {"reservation_id": "ABC123"}, RES % ("ABC123", "economy"))
    menu.agent("Options for ABC123:\n1. HAT110 + HAT172: $207\n2. HAT164 + HAT206: $290\n\nWould you like to proceed with the change?")
    assert not menu.user("Yes.").confirmed("airline", "update_reservation_flights", args)


def test_a_questionnaire_is_not_yet_a_statement_of_the_booking() -> None:
    # airline_adaptive-agent_opus46_tau3tasks:22:19:0:15: the answers complete the booking; it must be stated back
    assert not asks_go_ahead("Please confirm whether you'd like to keep the destination as PHL or switch to EWR.")
    args = {"user_id": "raj_1", "cabin": "economy", "flights": [{"flight_number": "HAT169", "date": "2024-05-17"}],
            "passengers": [{"first_name": "Raj", "last_name": "Brown"}]}
    chat = Chat().agent("I found HAT169 in economy for Raj Brown at $171. Would you like to go with this flight? "
                        "Would you like to add travel insurance? Which payment method would you like to use?")
    assert not chat.user("Yes, HAT169. No insurance, and use my Visa.").confirmed("airline", "book_reservation", args)


def test_a_renamed_passenger_is_conveyed_by_the_whole_new_name() -> None:
    # airline_adaptive-agent_cascata_tau3tasks:39:10:0:6: "Mei" and another passenger's "Garcia" do not state "Mei Garcia"
    res = ('{"reservation_id": "3RK2T9", "passengers": [{"first_name": "Anya", "last_name": "Garcia"}, '
           '{"first_name": "Mei", "last_name": "Lee"}]}')
    args = {"reservation_id": "3RK2T9", "passengers": [{"first_name": "Anya", "last_name": "Garcia"}, {"first_name": "Mei", "last_name": "Garcia"}]}
    chat = Chat().call("get_reservation_details", {"reservation_id": "3RK2T9"}, res)
    chat.agent("Reservation 3RK2T9 has Anya Garcia and Mei Lee. Which name should change? Please confirm that you want to proceed.")
    assert not chat.user("Change Mei Lee to Mei Garcia. Please proceed.").confirmed("airline", "update_reservation_passengers", args)
    chat.agent("I will change passenger Mei Lee to Mei Garcia on 3RK2T9. Shall I proceed?")
    assert chat.user("Yes.").confirmed("airline", "update_reservation_passengers", args)


def test_a_yes_to_all_of_a_listed_set_covers_each_target() -> None:
    # airline_claude-opus-4-6_user-gpt-4.1:49:47:1:41: "Confirm yes to proceed with all 5 downgrades"
    chat = Chat()
    ids = ("AAA111", "BBB222", "CCC333")
    for rid in ids:
        chat.call("get_reservation_details", {"reservation_id": rid}, RES % (rid, "business"))
    chat.agent("Downgrading to economy: AAA111 saves $100, BBB222 saves $200, CCC333 saves $300.")
    chat.user("Great.")
    chat.agent('To proceed, I need you to confirm:\n1. Keep the bags on AAA111 as they are?\n2. Confirm "yes" to proceed with all 3 downgrades to economy.')
    chat.user("Yes, go ahead and downgrade all 3 to economy.")
    args = {"reservation_id": "BBB222", "cabin": "economy", "flights": [{"flight_number": "HAT001", "date": "2024-05-20"},
                                                                    {"flight_number": "HAT002", "date": "2024-05-25"}]}
    assert chat.confirmed("airline", "update_reservation_flights", args)
    two = Chat()
    for rid in ids:
        two.call("get_reservation_details", {"reservation_id": rid}, RES % (rid, "business"))
    two.agent("Downgrading to economy: AAA111 saves $100, BBB222 saves $200, CCC333 saves $300.").user("Great.")
    two.agent('To proceed, I need you to confirm:\n1. Keep the bags on AAA111 as they are?\n2. Confirm "yes" to proceed with all 5 downgrades to economy.')
    assert not two.user("Yes, downgrade all 5.").confirmed("airline", "update_reservation_flights", args)


def test_a_statement_paying_this_write_another_way_does_not_state_it() -> None:
    # airline_adaptive-agent_cascata_tau3tasks:46:44:0:42: the plan splits NM1VX1 over a gift card and a Visa
    profile = ('{"user_id": "u1", "name": {"first_name": "Ana", "last_name": "Lee"}, "payment_methods": {'
               '"gift_card_5094406": {"source": "gift_card", "id": "gift_card_5094406"}, '
               '"credit_card_4196779": {"source": "credit_card", "id": "credit_card_4196779", "brand": "visa", "last_four": "7238"}}}')
    chat = Chat().call("get_user_details", {"user_id": "u1"}, profile)
    for rid in ("NM1VX1", "KC18K6"):
        chat.call("get_reservation_details", {"reservation_id": rid}, RES % (rid, "economy"))
    chat.agent("Upgrading both to business on the same flights:\n- NM1VX1 ($484): gift_card_5094406 ($274) + Visa ($210)\n"
               "- KC18K6 ($740): Visa ($740)\nWould you like to proceed? Please confirm with a yes.")
    chat.user("Yes, go ahead.")
    flights = [{"flight_number": "HAT001", "date": "2024-05-20"}, {"flight_number": "HAT002", "date": "2024-05-25"}]
    assert not chat.confirmed("airline", "update_reservation_flights",
                              {"reservation_id": "NM1VX1", "cabin": "business", "flights": flights, "payment_id": "gift_card_5094406"})
    assert chat.confirmed("airline", "update_reservation_flights",
                          {"reservation_id": "KC18K6", "cabin": "business", "flights": flights, "payment_id": "credit_card_4196779"})
