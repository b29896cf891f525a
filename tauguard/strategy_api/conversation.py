"""A tau2-independent view of the conversation, as guards and probes see it.

Guards never receive tau2 objects: the wrapper converts each message into these small
pydantic models, so strategies, probes and tests can build conversations by hand.
"""

from __future__ import annotations

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
