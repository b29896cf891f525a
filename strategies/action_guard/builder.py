"""A small builder of agent-visible conversations, for tests, probes and examples."""

from __future__ import annotations

import json
from typing import Any

from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.sim import texts


class ConversationBuilder:
    """Append text turns and executed tool calls (call + result) in order."""

    def __init__(self) -> None:
        self._events: list[ConversationEvent] = []
        self._n = 0

    def user(self, text: str) -> ConversationBuilder:
        """A user text turn."""
        self._events.append(ConversationEvent(kind="user_message", content=text))
        return self

    def agent(self, text: str) -> ConversationBuilder:
        """An agent text turn."""
        self._events.append(ConversationEvent(kind="agent_message", content=text))
        return self

    def tool(self, name: str, arguments: dict[str, Any], result: Any, error: bool = False) -> ConversationBuilder:
        """An agent tool call and its result (dicts and lists are JSON-encoded, as tau2 does)."""
        self._n += 1
        call = ToolCallView(id=f"call-{self._n}", name=name, arguments=arguments)
        content = result if isinstance(result, str) else json.dumps(result)
        self._events.append(ConversationEvent(kind="agent_tool_call", tool_call=call))
        self._events.append(ConversationEvent(kind="tool_result", tool_call=call, content=content, error=error))
        return self

    def confirm(self, name: str, arguments: dict[str, Any], reply: str = texts.USER_YES) -> ConversationBuilder:
        """The sim agent's statement of a write and the user's reply."""
        return self.agent(texts.confirm_request(name, arguments)).user(reply)

    def build(self) -> Conversation:
        """The conversation so far (a copy)."""
        return Conversation(events=list(self._events))
