"""The guard wrapper: a tau2 agent that runs a strategy's hooks around an inner agent.

- each user message fires ``on_user_turn`` (guidance goes to the inner agent's context);
- each tool result fires ``after_tool``;
- each WRITE call of the inner agent fires ``before_write``; a call not ALLOWed never
  reaches the environment: the inner agent receives the decision as that call's error
  result and is asked again, at most ``max_retries`` times per turn, after which the
  wrapper tells the user the action cannot be performed;
- every firing is recorded as a :class:`~tauguard.strategy_api.guard.GuardEvent`.
"""

from __future__ import annotations

import time
from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.tau2_adapter.agent_base import BaseAgent
from tauguard.agents.inner import append_history, receive_guard_decisions, set_guard_context
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import GUARD_ERROR_RULE, GuardDecision, GuardEvent, GuardSession, Verdict, refusal_text

HELD_SIBLING = (
    "NOT executed: another call in the same message was held by the guard. "
    "Re-issue this call on its own if it is still needed."
)


def _view(call: Any) -> ToolCallView:
    return ToolCallView(id=call.id, name=call.name, arguments=dict(call.arguments), requestor=call.requestor)


class GuardedAgent(BaseAgent):  # type: ignore[misc]  # τ² ships no types: BaseAgent is Any to mypy
    """Wraps an inner agent (tau2 LLMAgent adapter or the sim agent) with guard hooks."""

    def __init__(
        self,
        inner: Any,
        session: GuardSession | None,
        tool_types: dict[str, str],
        max_retries: int = 3,
    ) -> None:
        self.inner = inner
        self.session = session
        self.tool_types = tool_types
        self.max_retries = max_retries
        self.conversation = Conversation()
        self.events: list[GuardEvent] = []
        self._pending: dict[str, ToolCallView] = {}

    # -- tau2 agent interface -------------------------------------------------------------

    def get_init_state(self, message_history: list[Any] | None = None) -> Any:
        """Delegates to the inner agent; records the opening messages."""
        for msg in message_history or []:
            if isinstance(msg, t2.AssistantMessage) and msg.content:
                self.conversation.add(ConversationEvent(kind="agent_message", content=msg.content))
        return self.inner.get_init_state(message_history)

    def set_seed(self, seed: int) -> None:
        """Delegates to the inner agent."""
        self.inner.set_seed(seed)

    def stop(self, message: Any = None, state: Any = None) -> None:
        """Nothing to release."""

    @classmethod
    def is_stop(cls, message: Any) -> bool:
        """The agent ends the conversation by sending tau2's stop token."""
        return bool(getattr(message, "content", None)) and t2.STOP in message.content

    def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        """Observe the incoming message, let the inner agent act, gate its writes."""
        guidance = self._observe_incoming(message)
        if self.session is not None:
            context = self.session.render_context()
            if guidance:
                context = f"{context}\n\n{guidance}" if context else guidance
            set_guard_context(self.inner, context)
        out, state = self.inner.generate_next_message(message, state)
        retries = 0
        while self.session is not None and out.is_tool_call():
            held = self._gate(out)
            if not held:
                break
            feedback = [
                t2.ToolMessage(
                    id=call.id,
                    role="tool",
                    requestor="assistant",
                    error=True,
                    content=held[call.id].as_tool_error() if call.id in held else HELD_SIBLING,
                )
                for call in out.tool_calls
            ]
            retries += 1
            if retries > self.max_retries:
                out, state = self._give_up(out, held, feedback, state)
                break
            receive_guard_decisions(self.inner, held)
            reply = feedback[0] if len(feedback) == 1 else t2.MultiToolMessage(role="tool", tool_messages=feedback)
            out, state = self.inner.generate_next_message(reply, state)
        self._observe_outgoing(out)
        if out.cost is None and not getattr(out, "usage", None):
            out.cost = 0.0
        return out, state

    # -- hooks ----------------------------------------------------------------------------

    def _observe_incoming(self, message: Any) -> str | None:
        if isinstance(message, t2.UserMessage) and not message.is_tool_call():
            event = ConversationEvent(kind="user_message", content=message.content)
            self.conversation.add(event)
            if self.session is None:
                return None
            start = time.perf_counter()
            guidance = self.session.on_user_turn(event, self.conversation)
            details = self.session.turn_details()
            if guidance or details:
                self.events.append(
                    GuardEvent(hook="user_turn", step=len(self.conversation.events) - 1, guidance=guidance,
                               latency_s=time.perf_counter() - start, **details)
                )
            return guidance
        results = message.tool_messages if isinstance(message, t2.MultiToolMessage) else [message]
        for tm in results:
            if not isinstance(tm, t2.ToolMessage):
                continue
            call = self._pending.pop(tm.id, None) or ToolCallView(id=tm.id, name="unknown")
            event = ConversationEvent(kind="tool_result", content=tm.content, tool_call=call, error=tm.error)
            self.conversation.add(event)
            if self.session is not None:
                start = time.perf_counter()
                self.session.after_tool(event, self.conversation)
                self.events.append(
                    GuardEvent(hook="after_tool", step=len(self.conversation.events) - 1, tool_call=call,
                               latency_s=time.perf_counter() - start)
                )
        return None

    def _gate(self, out: Any) -> dict[str, GuardDecision]:
        assert self.session is not None
        held: dict[str, GuardDecision] = {}
        calls = [_view(call) for call in out.tool_calls]
        for index, call in enumerate(out.tool_calls):
            if self.tool_types.get(call.name) != "WRITE":
                continue
            view = calls[index]
            start = time.perf_counter()
            try:
                # the message's earlier calls run first if it is allowed: the guard sees them
                decision = self.session.before_write(view, self.conversation.gated_at(calls[:index]))
            except Exception as exc:  # a crashing guard must not pass a write silently
                decision = GuardDecision(
                    verdict=Verdict.VERIFY,
                    reason=f"guard error: {type(exc).__name__}: {exc}",
                    rule_id=f"{GUARD_ERROR_RULE}.exception",
                )
            self.events.append(
                GuardEvent(
                    hook="before_write",
                    step=len(self.conversation.events),
                    tool_call=view,
                    verdict=decision.verdict,
                    reason=decision.reason,
                    remediation=decision.remediation,
                    rule_id=decision.rule_id,
                    evidence=decision.evidence,
                    latency_s=time.perf_counter() - start,
                    usage=decision.usage,
                    raw=decision.raw,
                    fault_id=self._fault_for_call(call.id),
                )
            )
            if decision.verdict != Verdict.ALLOW:
                held[call.id] = decision
        return held

    def _give_up(self, out: Any, held: dict[str, GuardDecision], feedback: list[Any], state: Any) -> tuple[Any, Any]:
        call = out.tool_calls[0]
        decision = held.get(call.id) or next(iter(held.values()))
        self.events.append(
            GuardEvent(hook="retry_exhausted", step=len(self.conversation.events), tool_call=_view(call),
                       verdict=decision.verdict, reason=decision.reason, rule_id=decision.rule_id)
        )
        text = t2.AssistantMessage(role="assistant", content=refusal_text(call.name, decision.reason), cost=0.0)
        state = append_history(self.inner, state, [*feedback, text])
        return text, state

    def _observe_outgoing(self, out: Any) -> None:
        if out.is_tool_call():
            for call in out.tool_calls:
                view = _view(call)
                self._pending[call.id] = view
                self.conversation.add(ConversationEvent(kind="agent_tool_call", tool_call=view))
        elif out.content:
            self.conversation.add(ConversationEvent(kind="agent_message", content=out.content))

    def _fault_for_call(self, call_id: str) -> str | None:
        # The sim agent knows which of its calls carry an injected fault; LLM agents do not.
        lookup = getattr(self.inner, "fault_for_call", None)
        return lookup(call_id) if lookup is not None else None

    def guard_usage(self) -> dict[str, float]:
        """Total model usage of the guard in this simulation."""
        total = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0}
        for e in self.events:
            total["llm_calls"] += e.usage.llm_calls
            total["prompt_tokens"] += e.usage.prompt_tokens
            total["completion_tokens"] += e.usage.completion_tokens
            total["cost"] += e.usage.cost
        return total
