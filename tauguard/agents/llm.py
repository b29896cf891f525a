"""tau2's LLMAgent with the guard's rendered context placed in its prompt."""

from __future__ import annotations

from typing import Any

from tau2.agent.llm_agent import LLMAgent

from tauguard.tau2_adapter import compat as t2

GUARD_CONTEXT_HEADER = "<guard_context>\nThe runtime guard provides the following state and guidance.\n"


class GuardContextLLMAgent(LLMAgent):  # type: ignore[misc]  # τ² ships no types: LLMAgent is Any to mypy
    """tau2's LLMAgent; before each model call the guard's context (if any) is added as a
    second system message, replaced on every call so it always shows the current state."""

    _guard_context: str | None = None

    def set_guard_context(self, text: str | None) -> None:
        """The guard's rendered context for the next model call."""
        self._guard_context = text

    def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        """tau2's step, with the guard context in the system prompt."""
        base = [m for m in state.system_messages if not (m.content or "").startswith(GUARD_CONTEXT_HEADER)]
        if self._guard_context:
            base.append(t2.SystemMessage(role="system", content=GUARD_CONTEXT_HEADER + self._guard_context + "\n</guard_context>"))
        state.system_messages = base
        step: tuple[Any, Any] = super().generate_next_message(message, state)  # (message, state), untyped τ²
        return step

    def append_history(self, state: Any, messages: list[Any]) -> Any:
        """Record messages the wrapper produced on the agent's behalf."""
        state.messages.extend(messages)
        return state
