"""Gate every gold WRITE of the sim's gold plans (the no-false-block acceptance check).

One replay per task: the gold plan's conversation (statement + "yes" before each write,
reads as tool calls) is executed once in the real environment, then walked in order with
one guard session, firing the observation hooks as the live wrapper does and gating each
agent WRITE on the agent-visible conversation before it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from tauguard_strategies.action_guard.strategy import ActionGuardStrategy
from tauguard import tau2compat as t2
from tauguard.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.guard import Strategy, Verdict
from tauguard.replay import agent_view, decision_points, plan_events, replay_events, session_context
from tauguard.sim.plan import gold_plan


class GoldGate(BaseModel):
    """The guard's decision on one gold write."""

    domain: str
    task_id: str
    write_index: int
    tool: str
    verdict: Verdict
    rule_id: str | None = None
    failed_items: list[str] = Field(default_factory=list)
    reason: str = ""
    # Whether the environment accepted the gold write in the replay: tau2's gold actions
    # include a few attempts the tool itself rejects (a guard may rightly stop those).
    executed: bool = True


def gate_gold_task(domain: str, task: t2.Task, strategy: Strategy | None = None, follow_reads: bool = False) -> list[GoldGate]:
    """Replay ``task``'s gold plan once and gate each of its agent WRITEs in order.

    With ``follow_reads`` the plan is amended the way a compliant agent would react to a
    VERIFY: the reads the guard suggests are inserted before the held write and the task
    is replayed again, until no held write has a new suggested read (asks stay unmet).
    """
    plan = gold_plan(domain, task)
    expected = sum(1 for _ in decision_points(domain, task, plan))
    if expected == 0:
        return []
    events = plan_events(task, plan)
    for _ in range(8 * expected + 1):
        gates, amendment = _gate_events(domain, task, events, strategy or ActionGuardStrategy())
        if len(gates) != expected:
            raise AssertionError(f"{domain}/{task.id}: {len(gates)} writes replayed, {expected} in the gold plan")
        if not follow_reads or amendment is None:
            return gates
        position, reads = amendment
        events = events[:position] + reads + events[position:]
    return gates


def _gate_events(
    domain: str, task: t2.Task, events: list[ConversationEvent], strategy: Strategy
) -> tuple[list[GoldGate], tuple[int, list[ConversationEvent]] | None]:
    """Gate the writes of one replay; also return the reads to insert before the first held write."""
    replay = replay_events(domain, task, events)
    session = strategy.new_session(session_context(domain, task.id))
    assert session is not None
    agent_types, _ = t2.tool_types(domain)
    seen_events = agent_view(replay.conversation).events
    errors = {e.tool_call.id for e in seen_events if e.kind == "tool_result" and e.error and e.tool_call is not None}
    done = {(e.tool_call.name, json.dumps(e.tool_call.arguments, sort_keys=True)) for e in events if e.tool_call is not None}
    amendment: tuple[int, list[ConversationEvent]] | None = None
    seen = Conversation()
    gates: list[GoldGate] = []
    for event in seen_events:
        call = event.tool_call
        if event.kind == "agent_tool_call" and call is not None and agent_types.get(call.name) == "WRITE":
            decision = session.before_write(call, Conversation(events=list(seen.events)))
            gates.append(
                GoldGate(
                    domain=domain,
                    task_id=task.id,
                    write_index=len(gates),
                    tool=call.name,
                    verdict=decision.verdict,
                    rule_id=decision.rule_id,
                    failed_items=[f["id"] for f in decision.evidence.get("failed", [])],
                    reason=decision.reason,
                    executed=call.id not in errors,
                )
            )
            new = [r for r in decision.evidence.get("suggested_reads", []) if (r["name"], json.dumps(r["arguments"], sort_keys=True)) not in done]
            if amendment is None and decision.verdict == Verdict.VERIFY and new:
                position = next(i for i, e in enumerate(events) if e.tool_call is not None and e.tool_call.id == call.id and e.kind == "agent_tool_call")
                reads = [
                    ConversationEvent(kind="agent_tool_call", tool_call=ToolCallView(id=f"guard-read-{call.id}-{i}", name=r["name"], arguments=r["arguments"]))
                    for i, r in enumerate(new)
                ]
                amendment = (position, reads)
        seen.add(event)
        # The same observation hooks feed_session fires, interleaved with the gates.
        if event.kind == "tool_result":
            session.after_tool(event, seen)
        elif event.kind == "user_message":
            session.on_user_turn(event, seen)
    return gates, amendment


def sweep(
    domain: str, tasks: Iterable[t2.Task] | None = None, strategy: Strategy | None = None, follow_reads: bool = False
) -> list[GoldGate]:
    """Gate the gold writes of ``tasks`` (default: the domain's base split)."""
    tasks = t2.load_tasks(domain, "base") if tasks is None else tasks
    return [gate for task in tasks for gate in gate_gold_task(domain, task, strategy, follow_reads)]


def verdict_counts(gates: Iterable[GoldGate]) -> dict[str, int]:
    """Number of gold writes per verdict (all four verdicts present)."""
    counts = Counter(g.verdict.value for g in gates)
    return {v.value: counts.get(v.value, 0) for v in Verdict}


def failed_item_counts(gates: Iterable[GoldGate]) -> Counter[str]:
    """How often each checklist item held a gold write."""
    return Counter(item for g in gates for item in g.failed_items)
