"""Offline replay primitives: tau2's real environment, one tool call at a time, and a guard session fed as live.

A fresh environment of a task, one tool call run in it, the context a strategy's session gets,
the agent's view of a conversation and the session's observation hooks fired over it: the
parts every offline replay shares (sim plans, :mod:`tauguard.sim.plan_replay`; recorded real
trajectories, :mod:`tauguard.trajectories.replayer`; the audit).
"""

from __future__ import annotations

from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import GuardSession, SessionContext


def fresh_environment(domain: str, task: t2.Task) -> t2.Environment:
    """A pristine environment with the task's initial state applied (as the orchestrator does)."""
    return t2.task_environment(domain, task)


def call_tool(env: t2.Environment, call: ToolCallView) -> ConversationEvent:
    """Run one call in ``env`` and return its tool_result event."""
    msg = env.get_response(
        t2.ToolCall(id=call.id, name=call.name, arguments=call.arguments, requestor=call.requestor)
    )
    return ConversationEvent(kind="tool_result", content=msg.content, tool_call=call, error=msg.error)


def session_context(
    domain: str,
    task_id: str,
    *,
    guard_llm: str | None = None,
    guard_llm_args: dict[str, Any] | None = None,
) -> SessionContext:
    """The context a strategy's session gets for a task (as in live runs)."""
    agent_types, user_types = t2.tool_types(domain)
    return SessionContext(
        domain=domain,
        task_id=task_id,
        policy=t2.policy_text(domain),
        tool_types=agent_types,
        user_tool_types=user_types,
        guard_llm=guard_llm,
        guard_llm_args=dict(guard_llm_args or {}),
    )


def agent_view(conversation: Conversation) -> Conversation:
    """The events the agent (and so a guard) sees: no user-side tool calls or results."""
    return Conversation(events=[e for e in conversation.events if e.requestor != "user"])


def feed_session(session: GuardSession, conversation: Conversation) -> None:
    """Fire a session's observation hooks over a conversation, as the live wrapper does."""
    seen = Conversation()
    for event in agent_view(conversation).events:
        seen.add(event)
        if event.kind == "tool_result":
            session.after_tool(event, seen)
        elif event.kind == "user_message":
            session.on_user_turn(event, seen)
