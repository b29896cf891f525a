"""τ²'s LLMAgent, with the guard's rendered context in its prompt and its completions made by
tauguard's LLM layer (:func:`tauguard.agents.llm_generate.generate`, booked as role ``agent``)."""

from __future__ import annotations

from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.agents.llm_generate import generate

GUARD_CONTEXT_HEADER = "<guard_context>\nThe runtime guard provides the following state and guidance.\n"


class GuardContextLLMAgent(t2.llm_agent_class()):  # type: ignore[misc]  # τ²'s class, reached through the adapter
    """τ²'s LLMAgent; before each model call the guard's context (if any) is added as a
    second system message, replaced on every call so it always shows the current state."""

    _guard_context: str | None = None

    def set_guard_context(self, text: str | None) -> None:
        """The guard's rendered context for the next model call."""
        self._guard_context = text

    def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        """τ²'s step (the new message or tool results joined to the history, one model turn),
        with the guard context in the system prompt."""
        base = [m for m in state.system_messages if not (m.content or "").startswith(GUARD_CONTEXT_HEADER)]
        if self._guard_context:
            base.append(t2.SystemMessage(role="system", content=GUARD_CONTEXT_HEADER + self._guard_context + "\n</guard_context>"))
        state.system_messages = base
        if isinstance(message, t2.MultiToolMessage):
            state.messages.extend(message.tool_messages)
        else:
            state.messages.append(message)
        answer = generate("agent", self.llm, state.system_messages + state.messages, tools=self.tools, **self.llm_args)
        state.messages.append(answer)
        return answer, state

    def append_history(self, state: Any, messages: list[Any]) -> Any:
        """Record messages the wrapper produced on the agent's behalf."""
        state.messages.extend(messages)
        return state
