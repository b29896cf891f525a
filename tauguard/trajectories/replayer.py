"""Replaying a recorded τ² conversation in τ²'s environment, checking every tool result.

The walk rebuilds the conversation as guards see it (:mod:`tauguard.strategy_api.conversation` events,
in the order the live guard wrapper observes them) while executing each recorded tool call
in a fresh environment of the task (:func:`tauguard.tau2_adapter.replay.fresh_environment`,
:func:`tauguard.tau2_adapter.replay.call_tool`). Each replayed result is compared with the recorded one
(as τ² compares them: parsed JSON when both parse, else text); a difference is a
:class:`Mismatch`, counted and reported. A difference only in the pydantic version of an
error message's help URL (``errors.pydantic.dev/2.12`` vs ``2.13``) is marked benign.

Observers get every event and, before the tool calls of each agent message, the calls
with the conversation before them: that is where a strategy's gate is asked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.tau2_adapter.replay import call_tool, fresh_environment

_PYDANTIC_URL = re.compile(r"https://errors\.pydantic\.dev/[0-9.]+/")


class Mismatch(BaseModel):
    """A recorded tool call whose replayed result differs from the recorded one."""

    step: int  # index of the tool message in the recorded message list
    tool: str
    requestor: str
    recorded: str
    replayed: str
    benign: bool = False  # equal once pydantic's version in error URLs is ignored
    why: str = ""


class Observer(Protocol):
    """What a replay tells its observers."""

    def before_agent_calls(self, step: int, calls: list[ToolCallView], conversation: Conversation) -> None:
        """Before the calls of the agent message at ``step`` are added and executed."""

    def on_event(self, event: ConversationEvent, conversation: Conversation) -> None:
        """After ``event`` was appended to ``conversation``."""


def _parsed(text: str | None) -> Any:
    try:
        return json.loads(text) if text is not None else None
    except (json.JSONDecodeError, TypeError):
        return text


def compare_results(recorded: str | None, replayed: str | None) -> tuple[bool, bool]:
    """(equal, benign): equal as τ² compares; benign when equal up to pydantic's URL version."""
    if _parsed(recorded) == _parsed(replayed):
        return True, False

    def strip(s: str | None) -> str:
        return _PYDANTIC_URL.sub("https://errors.pydantic.dev/X/", s or "")

    return False, strip(recorded) == strip(replayed)


def _calls(message: dict[str, Any], requestor: str) -> list[ToolCallView]:
    return [
        ToolCallView(id=str(tc.get("id") or ""), name=tc["name"], arguments=dict(tc.get("arguments") or {}),
                     requestor=tc.get("requestor") or requestor)  # type: ignore[arg-type]
        for tc in message.get("tool_calls") or []
    ]


def _flat(messages: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    out: list[tuple[int, dict[str, Any]]] = []
    for index, message in enumerate(messages):
        if message.get("role") == "tool" and isinstance(message.get("tool_messages"), list):
            out.extend((index, m) for m in message["tool_messages"])
        else:
            out.append((index, message))
    return out


@dataclass
class RecordedReplay:
    """The outcome of replaying one recorded conversation."""

    conversation: Conversation
    environment: t2.Environment
    mismatches: list[Mismatch] = field(default_factory=list)
    tool_calls: int = 0
    # Tool errors of the replay, as (conversation length before the call, "name: content"),
    # the way ``tauguard.sim.plan_replay.replay_events`` lists failures.
    errors: list[tuple[int, str]] = field(default_factory=list)

    @property
    def faithful(self) -> bool:
        """Every replayed result equals the recorded one (benign differences aside)."""
        return all(m.benign for m in self.mismatches)


def replay_recorded(
    domain: str,
    task: t2.Task,
    messages: list[dict[str, Any]],
    observers: list[Any] | None = None,
    environment: t2.Environment | None = None,
) -> RecordedReplay:
    """Replay a recorded τ² message list in ``environment`` (default: a fresh one of ``task``)."""
    observers = list(observers or [])
    env = environment if environment is not None else fresh_environment(domain, task)
    replay = RecordedReplay(conversation=Conversation(), environment=env)
    conv = replay.conversation
    pending: dict[str, ToolCallView] = {}

    def add(event: ConversationEvent) -> None:
        conv.add(event)
        for obs in observers:
            obs.on_event(event, conv)

    for step, message in _flat(messages):
        role = message.get("role")
        if role == "assistant":
            if message.get("content"):
                add(ConversationEvent(kind="agent_message", content=message["content"]))
            calls = _calls(message, "assistant")
            if calls:
                for obs in observers:
                    obs.before_agent_calls(step, calls, conv)
            for call in calls:
                pending[call.id] = call
                add(ConversationEvent(kind="agent_tool_call", tool_call=call))
        elif role == "user":
            calls = _calls(message, "user")
            for call in calls:
                pending[call.id] = call
                add(ConversationEvent(kind="user_tool_call", tool_call=call))
            if message.get("content"):
                add(ConversationEvent(kind="user_message", content=message["content"]))
        elif role == "tool":
            called = pending.pop(str(message.get("id") or ""), None)
            if called is None:
                replay.mismatches.append(Mismatch(step=step, tool="?", requestor=str(message.get("requestor")),
                                                  recorded=str(message.get("content"))[:500], replayed="",
                                                  why="a tool result with no pending call"))
                continue
            result = call_tool(env, called)
            replay.tool_calls += 1
            if result.error:
                replay.errors.append((len(conv.events), f"{called.name}: {result.content}"))
            equal, benign = compare_results(message.get("content"), result.content)
            if not equal:
                replay.mismatches.append(Mismatch(
                    step=step, tool=called.name, requestor=called.requestor, recorded=str(message.get("content"))[:500],
                    replayed=str(result.content)[:500], benign=benign,
                    why="differs only in the pydantic version of an error URL" if benign else "replayed result differs",
                ))
            # Guards see the recorded result: it is what the agent saw.
            add(result.model_copy(update={"content": message.get("content"), "error": bool(message.get("error", result.error))}))
    for call in pending.values():
        replay.mismatches.append(Mismatch(step=len(messages), tool=call.name, requestor=call.requestor, recorded="",
                                          replayed="", why="a recorded call with no recorded result (not executed)"))
    return replay
