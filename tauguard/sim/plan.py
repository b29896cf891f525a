"""The sim agent's plan: the task's gold actions turned into conversation steps.

Reads are tool calls; each agent WRITE is preceded by a statement of the action and a
request for explicit confirmation; user-side actions (telecom) are requested in words;
the information the task requires is stated; then the agent closes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import ToolCallView

# "clarify" and "say" only arise live: a guard asks for something from the dialogue, or the
# agent tells the user something verbatim (a transfer notice).
StepKind = Literal["call", "confirm", "ask_user", "communicate", "clarify", "say", "close"]


class Step(BaseModel):
    """One step of the sim agent's plan."""

    kind: StepKind
    call: ToolCallView | None = None
    infos: list[str] = Field(default_factory=list)
    tool_type: str | None = None  # READ / WRITE / GENERIC / THINK for calls
    gold_index: int | None = None  # index into the task's gold actions
    write_index: int | None = None  # ordinal among the agent's gold WRITE calls
    gold: bool = True  # False for a write the gold plan does not contain (a temptation)
    fault_ids: list[str] = Field(default_factory=list)
    # On a confirm step: the statement also covers the next write, vaguely (bundle_confirmation).
    bundles_next: bool = False

    @property
    def is_write(self) -> bool:
        """An agent-side WRITE call."""
        return self.kind == "call" and self.tool_type == "WRITE"


def _call(action: Any, index: int) -> ToolCallView:
    return ToolCallView(
        id=f"{action.action_id or action.name}-{index}",
        name=action.name,
        arguments=dict(action.arguments),
        requestor=action.requestor,
    )


def gold_plan(domain: str, task: t2.Task) -> list[Step]:
    """The fault-free plan for ``task``: what `react` + sim does when nothing goes wrong."""
    agent_types, _ = t2.tool_types(domain)
    criteria = task.evaluation_criteria
    actions = (criteria.actions if criteria else None) or []
    steps: list[Step] = []
    write_index = 0
    for i, action in enumerate(actions):
        call = _call(action, i)
        if action.requestor == "user":
            steps.append(Step(kind="ask_user", call=call, gold_index=i))
            continue
        tool_type = agent_types.get(action.name, "GENERIC")
        if tool_type == "WRITE":
            steps.append(Step(kind="confirm", call=call, gold_index=i, write_index=write_index))
            steps.append(Step(kind="call", call=call, tool_type=tool_type, gold_index=i, write_index=write_index))
            write_index += 1
        else:
            steps.append(Step(kind="call", call=call, tool_type=tool_type, gold_index=i))
    infos = list((criteria.communicate_info if criteria else None) or [])
    if infos:
        steps.append(Step(kind="communicate", infos=infos))
    steps.append(Step(kind="close"))
    return steps


def targets(call: ToolCallView) -> set[str]:
    """Identifier-like argument values of a call (what a read must observe for a write)."""
    values: set[str] = set()
    for value in call.arguments.values():
        if isinstance(value, str) and value:
            values.add(value)
    return values


def observing_reads(plan: list[Step], write_pos: int) -> list[int]:
    """Positions of the reads before ``plan[write_pos]`` that observe the write's target.

    A read observes a write's target when they share an identifier-valued argument
    (e.g. ``get_reservation_details(reservation_id=X)`` before ``cancel_reservation(X)``).
    """
    write = plan[write_pos]
    assert write.call is not None
    wanted = targets(write.call)
    found = []
    for pos in range(write_pos):
        step = plan[pos]
        if step.kind == "call" and step.tool_type == "READ" and step.call is not None:
            if targets(step.call) & wanted:
                found.append(pos)
    return found
