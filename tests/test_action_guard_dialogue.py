"""The action guard's dialogue items are answered by the neutral judge its `dialogue` option picks."""

from __future__ import annotations

import pytest

from tauguard_strategies.action_guard.builder import ConversationBuilder
from tauguard_strategies.action_guard.dialogue import find_confirmation, reason_stated
from tauguard_strategies.action_guard.evidence import Evidence
from tauguard_strategies.action_guard.options import ActionGuardOptions
from tauguard_strategies.action_guard.session import ActionGuardSession
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.dialogue import NEUTRAL, Finding, Pairing
from tauguard.strategy_api.guard import SessionContext

CANCEL = ToolCallView(id="w", name="cancel_pending_order", arguments={"order_id": "#W5199551", "reason": "no longer needed"})


def _evidence(builder: ConversationBuilder) -> Evidence:
    return Evidence.from_conversation(builder.build())


def test_sim_phrasing_and_free_phrasing_confirm() -> None:
    assert find_confirmation(_evidence(ConversationBuilder().confirm(CANCEL.name, CANCEL.arguments)), CANCEL, NEUTRAL, "retail")
    free = ConversationBuilder().agent(
        "To confirm: I'll cancel order W5199551 (reason: no longer needed); the refund goes to your PayPal. Shall I go ahead?"
    ).user("No problem, go ahead.")
    found = find_confirmation(_evidence(free), CANCEL, NEUTRAL, "retail")
    assert found is not None and found.reply.text == "No problem, go ahead."


def test_another_order_or_a_refusal_does_not_confirm() -> None:
    other = ConversationBuilder().agent("I'll cancel order #W0000001. Do you confirm?").user("Yes.")
    assert find_confirmation(_evidence(other), CANCEL, NEUTRAL, "retail") is None
    refused = ConversationBuilder().agent("I'll cancel order #W5199551 (no longer needed). Do you confirm?").user("No, actually don't.")
    assert find_confirmation(_evidence(refused), CANCEL, NEUTRAL, "retail") is None


class _Stub:
    """A judge that finds one fixed confirmation and one covered reason (to see who is asked)."""

    name, version = "stub", 0

    def confirmation(self, domain, view, call, at=None):  # noqa: ANN001, ANN201
        return Finding(needed=True, pairs=[Pairing(statement_at=0, reply_at=1, statement="s", reply="r")], judge="stub/0")

    def polarity(self, text):  # noqa: ANN001, ANN201
        return "yes"

    def reason(self, domain, view, covered=False):  # noqa: ANN001, ANN201
        from tauguard.dialogue.reasons import Reason

        return Reason(1, "r", "health")


def test_the_checks_ask_the_judge_they_are_given() -> None:
    empty = _evidence(ConversationBuilder())
    assert find_confirmation(empty, CANCEL, NEUTRAL, "retail") is None
    found = find_confirmation(empty, CANCEL, _Stub(), "retail")  # type: ignore[arg-type]
    assert found is not None and found.statement.text == "s"
    assert reason_stated(empty, _Stub(), "airline", covered=True).text == "r"  # type: ignore[arg-type, union-attr]


def test_dialogue_option_llm_needs_a_guard_model() -> None:
    context = SessionContext(domain="retail", task_id="0", policy="", tool_types={})
    with pytest.raises(ValueError, match="dialogue=llm needs a guard model"):
        ActionGuardSession(context, ActionGuardOptions(backend="compiled", dialogue="llm"))
    session = ActionGuardSession(context.model_copy(update={"guard_llm": "openai/x"}), ActionGuardOptions(backend="compiled", dialogue="llm"))
    assert session.judge.name == "llm"
    assert ActionGuardSession(context, ActionGuardOptions()).judge is NEUTRAL


def test_a_missing_confirmation_tells_the_agent_the_judges_rule() -> None:
    from tauguard_strategies.action_guard.dialogue import confirmation_or_why

    refused = ConversationBuilder().agent("I'll cancel order #W5199551 (no longer needed). Do you confirm?").user("No, actually don't.")
    found, why = confirmation_or_why(_evidence(refused), CANCEL, NEUTRAL, "retail")
    assert found is None and why == "reply_not_yes: the reply reads as no"
    vague = ConversationBuilder().agent("Shall I cancel your order?").user("Yes.")
    found, why = confirmation_or_why(_evidence(vague), CANCEL, NEUTRAL, "retail")
    assert found is None and why.startswith("arguments_not_conveyed: not conveyed: order_id='#W5199551'")
    _, why = confirmation_or_why(_evidence(ConversationBuilder()), CANCEL, _Stub(), "retail")  # type: ignore[arg-type]
    assert why == ""  # confirmed: nothing to say
