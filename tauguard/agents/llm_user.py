"""τ²'s UserSimulator with its completions made by tauguard's LLM layer
(:func:`tauguard.agents.llm_generate.generate`, booked as role ``user``)."""

from __future__ import annotations

from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.agents.llm_generate import generate


class LLMUser(t2.user_simulator_class()):  # type: ignore[misc]  # τ²'s class, reached through the adapter
    """τ²'s UserSimulator (its prompt, instructions, tools and stop signals); only the model
    call is tauguard's."""

    def _generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        """τ²'s user step: the agent's message (or tool results) joined to the history, seen
        with the roles flipped; the model's answer becomes the user's message."""
        if isinstance(message, t2.MultiToolMessage):
            state.messages.extend(message.tool_messages)
        else:
            state.messages.append(message)
        answer = generate("user", self.llm, state.system_messages + state.flip_roles(), tools=self.tools, **self.llm_args)
        reply = t2.UserMessage(
            role="user", content=answer.content, cost=answer.cost, usage=answer.usage, raw_data=answer.raw_data,
        )
        if answer.tool_calls is not None:
            # The user's own tools (telecom): the calls are the user's, not the agent's.
            reply.tool_calls = [
                t2.ToolCall(id=c.id, name=c.name, arguments=c.arguments, requestor="user") for c in answer.tool_calls
            ]
        state.messages.append(reply)
        return reply, state
