"""The calls before a gated write in its agent message: one view for every guard (issue 22).

An agent message may carry several calls (a cancellation, then the certificate it earns). τ²
executes them in order after the whole message is gated, so when a later call is gated the
earlier ones are issued but not executed. :meth:`Conversation.gated_at` is the one view of
that, given by the live wrapper and by the audit; the real case is in tests/test_real_cases.py.
"""

from __future__ import annotations

from typing import Any

from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import GuardDecision, GuardSession

CANCEL = ToolCallView(id="c1", name="cancel_reservation", arguments={"reservation_id": "3JA7XV"})
CERTIFICATE = ToolCallView(id="c2", name="send_certificate", arguments={"user_id": "mei_brown_7075", "amount": 200})


def _conversation() -> Conversation:
    read = ToolCallView(id="r1", name="get_reservation_details", arguments={"reservation_id": "3JA7XV"})
    return Conversation(events=[
        ConversationEvent(kind="user_message", content="Please cancel it and issue the voucher."),
        ConversationEvent(kind="agent_tool_call", tool_call=read),
        ConversationEvent(kind="tool_result", tool_call=read, content="{}"),
    ])


def test_the_earlier_calls_of_the_message_are_pending_in_the_gated_view() -> None:
    conv = _conversation()
    assert conv.pending_calls() == [] and conv.settled() == 3  # an answered call is not pending
    gated = conv.gated_at([CANCEL])
    assert gated.pending_calls() == [CANCEL]
    assert gated.settled() == 3 and len(gated.events) == 4
    assert len(conv.events) == 3  # the conversation itself is not changed


class _Recording(GuardSession):
    def __init__(self) -> None:
        self.seen: dict[str, list[str]] = {}

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        self.seen[call.name] = [c.name for c in conversation.pending_calls()]
        return GuardDecision.allow()


class _Inner:
    """An inner agent that answers with one message carrying two writes."""

    def get_init_state(self, message_history: Any = None) -> None:
        return None

    def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        from tauguard.tau2_adapter import compat as t2

        calls = [t2.ToolCall(id=c.id, name=c.name, arguments=c.arguments, requestor="assistant") for c in (CANCEL, CERTIFICATE)]
        return t2.AssistantMessage(role="assistant", content=None, tool_calls=calls), state


def test_the_live_wrapper_gates_a_later_call_with_the_earlier_ones_pending() -> None:
    from tauguard.tau2_adapter import compat as t2
    from tauguard.agents.guarded import GuardedAgent

    session = _Recording()
    agent = GuardedAgent(_Inner(), session, t2.tool_types("airline")[0])
    agent.generate_next_message(t2.UserMessage(role="user", content="Cancel and send the voucher."), None)
    assert session.seen == {"cancel_reservation": [], "send_certificate": ["cancel_reservation"]}


def test_the_workflow_tracker_does_not_consume_a_held_messages_calls() -> None:
    # A message may be held and asked again: the tracker must not count its pending calls as
    # seen, or it skips the events that later take their places.
    from tauguard.strategy_api.registry import create_strategy
    from tauguard.tau2_adapter.replay import session_context

    session = create_strategy("workflow").new_session(session_context("airline", "5"))
    assert session is not None
    conv = _conversation()
    session.before_write(CERTIFICATE, conv.gated_at([CANCEL]))
    assert session.tracker.state.seen == 3  # type: ignore[attr-defined]
