"""The gold sweep: every gold WRITE of a split gated by any strategy, in order.

One replay per task (incremental: the same decisions as a fresh session and a full replay
of the prefix before each write, ``tauguard.sim.plan_replay.gate_after_prefix``, at one replay's
cost). The gold plan's conversation -- the sim's statement and the user's "yes" before each
write, reads as tool calls -- runs in the real environment; agent-visible events feed the
strategy's observation hooks as the live wrapper does, and each agent WRITE is gated before
it executes (then executed regardless, as the gold plan does).

With ``follow_reads`` the session behaves like a compliant agent: on a VERIFY naming reads
it performs them (:mod:`tauguard.probes.follow_reads`, the sim oracle supplying arguments
left to the agent), and the write is gated again; the reads stay in its conversation.
Without, it sees exactly the gold plan. Gold plans often omit reads the policy asks for, so
the figure with the reads followed is the headline one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import FINDINGS_KEY, GuardDecision, GuardSession, ReadRequest, Strategy, Verdict
from tauguard.probes.follow_reads import gate_after_reads
from tauguard.strategy_api.registry import create_strategy
from tauguard.tau2_adapter.replay import call_tool, fresh_environment, session_context
from tauguard.sim.plan_replay import iter_assembled, plan_events
from tauguard.sim.plan import gold_plan, observing_reads

NO_GATE = "the strategy has no gate"


class GoldDecision(BaseModel):
    """A strategy's decision on one gold write."""

    domain: str
    task_id: str
    write_index: int  # ordinal among the task's agent WRITEs
    tool: str
    follow_reads: bool  # whether the session performed the reads its VERIFYs asked for
    verdict: Verdict
    rule_id: str | None = None
    reason: str = ""
    findings: list[str] = Field(default_factory=list)  # rule ids of every held finding
    required_reads: list[str] = Field(default_factory=list)  # the reads a VERIFY names, described
    reads_done: int = 0  # reads performed following the requests before the last decision
    plan_reads_target: bool = False  # the gold plan reads the write's target before it
    # Whether tau2's environment accepted the write: a few gold actions are attempts the
    # tool itself rejects, which a guard may rightly stop.
    executed: bool = True
    # The decision's full evidence (for callers and tests; not serialized, it can be large).
    evidence: dict[str, Any] = Field(default_factory=dict, exclude=True)

    @property
    def held(self) -> bool:
        """Whether the strategy kept the write from the environment."""
        return self.verdict != Verdict.ALLOW


@dataclass
class _Lane:
    """One guard session walking the replay (plain, or following requested reads)."""

    follow_reads: bool
    session: GuardSession | None
    seen: Conversation = field(default_factory=Conversation)


def _record(domain: str, task_id: str, index: int, call: ToolCallView, lane: _Lane,
            decision: GuardDecision, reads_done: int, target: bool) -> GoldDecision:
    return GoldDecision(
        domain=domain, task_id=task_id, write_index=index, tool=call.name, follow_reads=lane.follow_reads,
        verdict=decision.verdict, rule_id=decision.rule_id, reason=decision.reason,
        findings=[f.get("rule_id", "") for f in decision.evidence.get(FINDINGS_KEY, [])],
        required_reads=[ReadRequest.model_validate(r).describe() for r in decision.required_reads],
        reads_done=reads_done, plan_reads_target=target, evidence=decision.evidence,
    )


def _gate(domain: str, env: t2.Environment, lane: _Lane, call: ToolCallView) -> tuple[GuardDecision, int]:
    if lane.session is None:
        return GuardDecision.allow(NO_GATE), 0
    decision = lane.session.before_write(call, Conversation(events=list(lane.seen.events)))
    if not lane.follow_reads:
        return decision, 0
    return gate_after_reads(lane.session, domain, env, lane.seen, call, decision)


def _observe(lane: _Lane, event: ConversationEvent) -> None:
    """The observation hooks the live wrapper fires (as ``tauguard.tau2_adapter.replay.feed_session``)."""
    lane.seen.add(event)
    if lane.session is None:
        return
    if event.kind == "tool_result":
        lane.session.after_tool(event, lane.seen)
    elif event.kind == "user_message":
        lane.session.on_user_turn(event, lane.seen)


def sweep_task(
    strategy: Strategy, domain: str, task: t2.Task, modes: Sequence[bool] = (True,), options: dict[str, Any] | None = None
) -> list[GoldDecision]:
    """Gate every gold WRITE of ``task`` once per mode (``follow_reads`` values), in one replay."""
    agent_types, _ = t2.tool_types(domain)
    plan = gold_plan(domain, task)
    targets = {step.write_index: bool(observing_reads(plan, pos)) for pos, step in enumerate(plan) if step.is_write}
    env = fresh_environment(domain, task)
    lanes = [_Lane(follow, strategy.new_session(session_context(domain, task.id))) for follow in modes]
    records: list[GoldDecision] = []
    index = 0
    for event in iter_assembled(plan_events(task, plan), lambda call: call_tool(env, call)):
        if event.requestor == "user":
            continue  # device side: changes the environment, never seen by the agent or guard
        call = event.tool_call
        if event.kind == "agent_tool_call" and call is not None and agent_types.get(call.name) == "WRITE":
            for lane in lanes:
                decision, done = _gate(domain, env, lane, call)
                records.append(_record(domain, task.id, index, call, lane, decision, done, targets.get(index, False)))
            index += 1
        elif event.kind == "tool_result" and event.error and call is not None and agent_types.get(call.name) == "WRITE":
            for record in records[-len(lanes):]:
                record.executed = False
        for lane in lanes:
            _observe(lane, event)
    return records


def _strategy(strategy: str | Strategy, options: dict[str, Any] | None) -> Strategy:
    return create_strategy(strategy, options) if isinstance(strategy, str) else strategy


def tasks_with_writes(domain: str, split: str = "base", task_ids: Iterable[str] | None = None) -> list[t2.Task]:
    """The split's tasks (or those of ``task_ids``, in the split's order) whose gold plan has an agent WRITE."""
    wanted = None if task_ids is None else set(task_ids)
    return [
        t for t in t2.load_tasks(domain, split)
        if (wanted is None or t.id in wanted) and not t2.is_policy_violation_task(domain, t)
    ]


def sweep_modes(
    strategy: str | Strategy,
    domain: str,
    split: str = "base",
    modes: Sequence[bool] = (False, True),
    *,
    options: dict[str, Any] | None = None,
    task_ids: Iterable[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[GoldDecision]:
    """:func:`sweep` in several modes at once (one replay per task serves them all)."""
    instance = _strategy(strategy, options)
    tasks = tasks_with_writes(domain, split, task_ids)
    records: list[GoldDecision] = []
    for i, task in enumerate(tasks):
        records += sweep_task(instance, domain, task, modes, options)
        if progress is not None:
            progress(task.id, i + 1, len(tasks))
    return records


def sweep(
    strategy: str | Strategy,
    domain: str,
    split: str = "base",
    follow_reads: bool = True,
    *,
    options: dict[str, Any] | None = None,
    task_ids: Iterable[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[GoldDecision]:
    """Gate every gold WRITE of ``split``'s tasks in ``domain`` with ``strategy``.

    ``strategy`` is a registered name (created with ``options``) or an instance. With
    ``follow_reads`` (the default, and the headline figure) a VERIFY's requested reads are
    performed and the write gated again. ``progress(task_id, done, total)`` is called after
    each task.
    """
    return sweep_modes(strategy, domain, split, (follow_reads,), options=options, task_ids=task_ids, progress=progress)


def verdict_counts(decisions: Iterable[GoldDecision]) -> dict[str, int]:
    """Number of gold writes per verdict (all four verdicts present, in severity order)."""
    counts = Counter(d.verdict.value for d in decisions)
    return {v.value: counts.get(v.value, 0) for v in Verdict}
