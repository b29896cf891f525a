"""A tau2-independent view of the conversation, as guards and probes see it.

Guards never receive tau2 objects: the wrapper converts each message into these small
pydantic models, so strategies, probes and tests can build conversations by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

Requestor = Literal["assistant", "user"]


class ToolCallView(BaseModel):
    """A proposed or executed tool call."""

    id: str = ""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: Requestor = "assistant"


class ConversationEvent(BaseModel):
    """One event of the conversation.

    kind:
      - ``user_message`` / ``agent_message``: text turns;
      - ``agent_tool_call`` / ``user_tool_call``: a tool call (``tool_call`` set);
      - ``tool_result``: the environment's answer to the call with ``tool_call.id``
        (``tool_call`` repeats the call, ``content`` is the result, ``error`` flags a failure).
    """

    kind: Literal["user_message", "agent_message", "agent_tool_call", "user_tool_call", "tool_result"]
    content: str | None = None
    tool_call: ToolCallView | None = None
    error: bool = False

    @property
    def requestor(self) -> Requestor | None:
        """Who asked for the tool call behind this event, if any."""
        return self.tool_call.requestor if self.tool_call is not None else None


class Conversation(BaseModel):
    """The ordered events seen so far in one simulation (agent and user side)."""

    events: list[ConversationEvent] = Field(default_factory=list)

    def add(self, event: ConversationEvent) -> None:
        """Append an event."""
        self.events.append(event)

    def tool_results(self, requestor: Requestor | None = "assistant") -> list[ConversationEvent]:
        """Tool results, optionally only those of one requestor's calls."""
        return [
            e
            for e in self.events
            if e.kind == "tool_result" and (requestor is None or e.requestor == requestor)
        ]

    def messages(self) -> list[ConversationEvent]:
        """Text turns of user and agent."""
        return [e for e in self.events if e.kind in ("user_message", "agent_message")]

    def gated_at(self, earlier: Sequence[ToolCallView]) -> Conversation:
        """The conversation a call is gated on: this one, then the calls that precede it in its agent message.

        An agent message may carry several calls ("cancel 3JA7XV", then "send the certificate").
        τ² executes them in order, but only after the whole message is gated, so when a later
        call is gated the earlier ones are issued and not yet executed: they appear as
        ``agent_tool_call`` events with no result (:meth:`pending_calls`). The wrapper holds
        every call of a message when one is held, so a later call is executed only after the
        earlier ones were allowed, and right after them. The live wrapper and the audit both
        gate on this view, so every guard sees a message's earlier calls the same way.
        """
        return Conversation(events=[*self.events, *(ConversationEvent(kind="agent_tool_call", tool_call=c) for c in earlier)])

    def pending_calls(self) -> list[ToolCallView]:
        """The agent's calls with no result yet (the trailing ``agent_tool_call`` events): when a call
        is gated, the earlier calls of its message."""
        pending: list[ToolCallView] = []
        for event in reversed(self.events):
            if event.kind != "agent_tool_call" or event.tool_call is None:
                break  # results follow their calls: only the trailing calls are unanswered
            pending.insert(0, event.tool_call)
        return pending

    def settled(self) -> int:
        """How many events precede the trailing calls without a result (what a stateful guard may consume for good)."""
        return len(self.events) - len(self.pending_calls())
