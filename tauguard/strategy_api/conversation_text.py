"""The agent-visible conversation as numbered prompt lines, for the LLM guard verifiers.

The action-guard verifier and the workflow verifier show the model the same rendering, so a
verdict cites the same line numbers whichever guard asked. Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import json

from tauguard.strategy_api.conversation import Conversation


def render_conversation(conversation: Conversation) -> str:
    """The conversation as numbered lines (text turns, tool calls and their results)."""
    lines = []
    for i, event in enumerate(conversation.events):
        call = event.tool_call
        if event.kind == "user_message":
            lines.append(f"[{i}] USER: {event.content or ''}")
        elif event.kind == "agent_message":
            lines.append(f"[{i}] AGENT: {event.content or ''}")
        elif event.kind in ("agent_tool_call", "user_tool_call") and call is not None:
            who = "AGENT" if event.kind == "agent_tool_call" else "USER"
            lines.append(f"[{i}] {who} CALLS {call.name}({json.dumps(call.arguments, sort_keys=True)})")
        elif event.kind == "tool_result" and call is not None:
            status = "ERROR" if event.error else "RESULT"
            lines.append(f"[{i}] TOOL {status} of {call.name}: {event.content or ''}")
    return "\n".join(lines)
