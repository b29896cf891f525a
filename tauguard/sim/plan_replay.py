"""Offline replay of a sim plan (or a list of events) against tau2's real environment.

Used to build probes, to check gates on gold plans without running conversations, and by
probe evaluation. It produces exactly the conversation events the live sim produces
(same texts, same tool results), so a gate sees the same thing offline and live. The
environment and the session are the adapter's (:mod:`tauguard.tau2_adapter.replay`); the
texts and plans are the sim's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from tauguard.tau2_adapter import compat as t2
from tauguard.tau2_adapter.replay import agent_view, call_tool, feed_session, fresh_environment
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import GuardDecision, GuardSession
from tauguard.sim import texts
from tauguard.sim.plan import Step, gold_plan


def opening_message(task: t2.Task) -> str:
    """The sim user's opening line for ``task``."""
    instr = task.user_scenario.instructions
    if isinstance(instr, str):
        return instr
    return texts.opening(instr.reason_for_call, instr.known_info)


def plan_events(task: t2.Task, plan: list[Step]) -> list[ConversationEvent]:
    """The conversation a plan produces, without tool results (they come from the env).

    Tool results are inserted by :func:`replay_events`; user reports of device actions
    carry a placeholder that replay fills with the real result.
    """
    events = [
        ConversationEvent(kind="agent_message", content=texts.GREETING),
        ConversationEvent(kind="user_message", content=opening_message(task)),
    ]
    for step in plan:
        if step.kind == "call" and step.call is not None:
            events.append(ConversationEvent(kind="agent_tool_call", tool_call=step.call))
        elif step.kind == "confirm" and step.call is not None:
            note = step.infos[0] if step.infos else None
            events.append(ConversationEvent(kind="agent_message", content=texts.confirm_request(step.call.name, step.call.arguments, note)))
            events.append(ConversationEvent(kind="user_message", content=texts.USER_YES))
        elif step.kind == "ask_user" and step.call is not None:
            events.append(ConversationEvent(kind="agent_message", content=texts.user_action_request(step.call.name, step.call.arguments)))
            events.append(ConversationEvent(kind="user_tool_call", tool_call=step.call))
            events.append(ConversationEvent(kind="user_message", content=None, tool_call=step.call))
        elif step.kind == "communicate":
            events.append(ConversationEvent(kind="agent_message", content=texts.communicate(step.infos)))
        elif step.kind == "close":
            events.append(ConversationEvent(kind="agent_message", content=texts.AGENT_CLOSE))
            events.append(ConversationEvent(kind="user_message", content=texts.USER_STOP))
    return events


@dataclass
class Replay:
    """The result of replaying events: the full conversation and the environment after it."""

    conversation: Conversation
    environment: t2.Environment
    failures: list[str] = field(default_factory=list)  # calls that errored during replay


def replay_events(domain: str, task: t2.Task, events: list[ConversationEvent]) -> Replay:
    """Execute the tool calls among ``events`` in a fresh environment, inserting results.

    Existing ``tool_result`` events are dropped and regenerated. A ``user_message`` with no
    content following a user tool call becomes the sim user's report of its result.
    """
    env = fresh_environment(domain, task)
    failures: list[str] = []

    def run(call: ToolCallView) -> ConversationEvent:
        result = call_tool(env, call)
        if result.error:
            failures.append(f"{call.name}: {result.content}")
        return result

    return Replay(conversation=assemble(events, run), environment=env, failures=failures)


def assemble(events: list[ConversationEvent], result_of: Callable[[ToolCallView], ConversationEvent]) -> Conversation:
    """The conversation of ``events`` with each call followed by ``result_of(call)``.

    Existing ``tool_result`` events are dropped; a content-less ``user_message`` after a
    user tool call becomes the sim user's report of that call's result.
    """
    return Conversation(events=list(iter_assembled(events, result_of)))


def iter_assembled(
    events: list[ConversationEvent], result_of: Callable[[ToolCallView], ConversationEvent]
) -> Iterator[ConversationEvent]:
    """The events of :func:`assemble`, one at a time.

    A call is yielded before ``result_of`` runs it, so a caller can gate a write before the
    environment executes it (incremental replay: one environment for a whole plan).
    """
    last_user_result: dict[str, str] = {}
    for event in events:
        if event.kind == "tool_result":
            continue
        if event.kind in ("agent_tool_call", "user_tool_call") and event.tool_call is not None:
            yield event
            result = result_of(event.tool_call)
            last_user_result[event.tool_call.name] = result.content or ""
            yield result
            continue
        if event.kind == "user_message" and event.content is None and event.tool_call is not None:
            name = event.tool_call.name
            yield ConversationEvent(kind="user_message", content=texts.user_action_report(name, last_user_result.get(name, "")))
            continue
        yield event


@dataclass
class DecisionPoint:
    """A proposed agent WRITE with the conversation before it."""

    domain: str
    task_id: str
    write_index: int
    prefix: list[ConversationEvent]  # calls and messages before the write (no tool results)
    call: ToolCallView


def decision_points(domain: str, task: t2.Task, plan: list[Step] | None = None) -> Iterator[DecisionPoint]:
    """Each agent WRITE of a plan (default: the gold plan) with the events before it."""
    plan = gold_plan(domain, task) if plan is None else plan
    agent_types, _ = t2.tool_types(domain)
    events = plan_events(task, plan)
    index = 0
    for pos, event in enumerate(events):
        call = event.tool_call
        if event.kind == "agent_tool_call" and call is not None and agent_types.get(call.name) == "WRITE":
            yield DecisionPoint(domain, task.id, index, [e for e in events[:pos] if e.kind != "tool_result"], call)
            index += 1


def gate_after_prefix(
    session: GuardSession, domain: str, task: t2.Task, prefix: list[ConversationEvent], call: ToolCallView
) -> tuple[GuardDecision, Replay]:
    """Replay ``prefix`` in the real environment, feed the session, then gate ``call``."""
    replay = replay_events(domain, task, prefix)
    feed_session(session, replay.conversation)
    return session.before_write(call, agent_view(replay.conversation)), replay
