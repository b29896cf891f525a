"""The inner-agent protocol: what the guard wrapper needs from the agent it wraps.

tau2's agent interface (``get_init_state``, ``generate_next_message``, ``set_seed``) plus
three optional methods the wrapper calls when present.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from tauguard.strategy_api.guard import GuardDecision


@runtime_checkable
class InnerAgent(Protocol):
    """An agent the guard wrapper can drive."""

    def get_init_state(self, message_history: list[Any] | None = None) -> Any:
        """tau2's initial agent state."""

    def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        """tau2's step: (AssistantMessage, new state)."""

    def set_seed(self, seed: int) -> None:
        """Seed the agent."""


def set_guard_context(agent: Any, text: str | None) -> None:
    """Give the agent the guard's rendered context (ledger, guidance) for its next call."""
    fn = getattr(agent, "set_guard_context", None)
    if fn is not None:
        fn(text)


def receive_guard_decisions(agent: Any, decisions: dict[str, GuardDecision]) -> None:
    """Tell the agent, by call id, which of its calls the guard held and why."""
    fn = getattr(agent, "receive_guard_decisions", None)
    if fn is not None:
        fn(decisions)


def append_history(agent: Any, state: Any, messages: list[Any]) -> Any:
    """Append messages to the agent's history without a model call (after the wrapper
    answers on the agent's behalf); returns the new state."""
    fn = getattr(agent, "append_history", None)
    if fn is not None:
        return fn(state, messages)
    if hasattr(state, "messages"):
        state.messages.extend(messages)
    return state
