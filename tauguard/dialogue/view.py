"""What the dialogue judge reads of a conversation: text turns, calls, results, in order.

Built from :class:`tauguard.strategy_api.conversation.Conversation` (what guards see) or from a stored τ²
simulation's ``messages`` (what the process rubric and the calibration cases see); both give
the same :class:`DialogueView`, with positions that are indices into the conversation's
events, and for stored messages a map from message index to event index.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView


@dataclass(frozen=True)
class Turn:
    """One text turn: its event position, who spoke and what."""

    position: int
    role: str  # "agent" | "user"
    text: str


@dataclass(frozen=True)
class Result:
    """One tool result: the call it answers, its content, whether it failed."""

    position: int
    call: ToolCallView
    content: str
    error: bool
    data: Any  # parsed JSON, or None


@dataclass
class DialogueView:
    """Turns, call positions and results of a conversation (or of its prefix)."""

    turns: list[Turn] = field(default_factory=list)
    calls: list[tuple[int, ToolCallView]] = field(default_factory=list)  # (position, call)
    results: list[Result] = field(default_factory=list)

    def before(self, position: int) -> DialogueView:
        """The view of everything strictly before ``position``."""
        return DialogueView(
            turns=[t for t in self.turns if t.position < position],
            calls=[c for c in self.calls if c[0] < position],
            results=[r for r in self.results if r.position < position],
        )

    def result_of(self, call: ToolCallView) -> Result | None:
        """The result answering ``call`` (matched by id), if it came back."""
        return next((r for r in self.results if call.id and r.call.id == call.id), None)


def _parse(content: str) -> Any:
    try:
        return json.loads(content)
    except (ValueError, TypeError):
        return None


def agent_text(content: str) -> str:
    """An agent message's words: some agents answer in JSON (``{"message": "...", ...}``).

    The ``message`` comes first, then every other string the object holds, one per line, in
    order: agents put the summary, the options and the confirmation request ("Please reply
    'yes' to return both items ...") in fields of their own, and all of it is said to the user.
    """
    stripped = content.strip()
    if not stripped.startswith("{"):
        return content
    data = _parse(stripped)
    if not isinstance(data, dict):
        return content
    lines = [data["message"]] if isinstance(data.get("message"), str) else []
    lines += [line for key, value in data.items() if key != "message" for line in _said(value)]
    return "\n".join(lines) if lines else content


def _said(value: Any) -> list[str]:
    """The strings of a parsed JSON value, depth first (numbers and flags kept as words)."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, dict):
        return [line for child in value.values() for line in _said(child)]
    if isinstance(value, list):
        return [line for child in value for line in _said(child)]
    return [] if value is None else [str(value)]


def view_of(conversation: Conversation) -> DialogueView:
    """The dialogue view of a guard's conversation."""
    view = DialogueView()
    for pos, event in enumerate(conversation.events):
        _add(view, pos, event)
    return view


def _add(view: DialogueView, pos: int, event: ConversationEvent) -> None:
    if event.kind in ("user_message", "agent_message") and event.content:
        role = "agent" if event.kind == "agent_message" else "user"
        view.turns.append(Turn(pos, role, agent_text(event.content) if role == "agent" else event.content))
    elif event.kind in ("agent_tool_call", "user_tool_call") and event.tool_call is not None:
        view.calls.append((pos, event.tool_call))
    elif event.kind == "tool_result" and event.tool_call is not None:
        content = event.content or ""
        view.results.append(Result(pos, event.tool_call, content, event.error, _parse(content)))


def conversation_of_messages(messages: list[dict[str, Any]]) -> tuple[Conversation, dict[tuple[int, int], int]]:
    """The conversation of stored τ² ``messages`` and a map (message index, part) -> event index.

    Part -1 is a message's text, part ``k`` >= 0 its ``k``-th tool call (the text comes first:
    an agent says what it does, then does it).
    """
    conv = Conversation()
    where: dict[tuple[int, int], int] = {}
    calls: dict[str, ToolCallView] = {}
    for m_index, msg in enumerate(messages):
        role = msg.get("role")
        if role in ("assistant", "user"):
            side = "agent" if role == "assistant" else "user"
            if isinstance(msg.get("content"), str) and msg["content"].strip():
                where[(m_index, -1)] = len(conv.events)
                conv.add(ConversationEvent(kind=f"{side}_message", content=msg["content"]))  # type: ignore[arg-type]
            for c_index, raw in enumerate(msg.get("tool_calls") or []):
                if not isinstance(raw, dict):
                    continue
                requestor = "user" if (raw.get("requestor") or role) == "user" else "assistant"
                call = ToolCallView(id=str(raw.get("id") or f"{m_index}:{c_index}"), name=str(raw.get("name") or ""),
                                    arguments=dict(raw.get("arguments") or {}), requestor=requestor)  # type: ignore[arg-type]
                calls[call.id] = call
                where[(m_index, c_index)] = len(conv.events)
                conv.add(ConversationEvent(kind=f"{side}_tool_call", tool_call=call))  # type: ignore[arg-type]
        elif role == "tool":
            call = calls.get(str(msg.get("id") or "")) or ToolCallView(name="unknown")
            content = msg.get("content")
            conv.add(ConversationEvent(kind="tool_result", content=content if isinstance(content, str) else json.dumps(content),
                                       tool_call=call, error=bool(msg.get("error"))))
    return conv, where
