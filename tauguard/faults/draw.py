"""Drawing a trial's faults and applying plan-level faults to the sim agent's plan.

The draw depends only on (seed, domain, task id, trial), the profile and the gold plan —
never on the strategy — so every strategy run with the same seed meets the same faults.
By default (``draw = "independent"``) one random number is drawn per (gold write, candidate
fault) whether or not an earlier fault already took that write, so the stream stays aligned
across profiles that differ only in rates. A fitted profile (``draw = "first_deviation"``)
draws one number per write and takes each candidate with exactly its rate (the rates are
shares of first deviations, which compete for the write).
"""

from __future__ import annotations

import random

from tauguard.strategy_api.conversation import ToolCallView
from tauguard.faults.catalog import load_catalog, temptations
from tauguard.faults.model import FaultProfile, ScheduledFault
from tauguard.domains.gold_conflicts import conflict_at
from tauguard.sim.plan import Step, observing_reads
from tauguard.sim.texts import TRANSFER_NOTICE

TRANSFER_TOOL = "transfer_to_human_agents"
# Copies of the write a repeat_loop fault makes after it: more than any run's step limit lets
# through (each copy is a call and its result), so the run ends at max_steps, as the real loops did.
LOOP_REPEATS = 300
CONFLICT_REFUSAL = "conflict_refusal"  # a policy-following refusal of a gold-conflict write (not a fault)
# A failure the sim has no model of (FaultProfile.unexplained_failure). The sim marks it by
# repeating a read from its first turn until τ² cuts the run (max_steps, or too_many_errors when
# the read fails), which τ² scores 0: no write is made, so no guard can change the outcome. Drawn
# from its own stream, so the other draws of a trial are the same with or without it.
UNEXPLAINED = "unexplained_failure"


def skipped_reads(plan: list[Step], write_pos: int, skip_tools: list[str] | None = None) -> list[int]:
    """Positions of the reads a skip_read fault drops before ``plan[write_pos]``.

    With ``skip_tools`` (e.g. the authentication look-ups): every READ call of those tools
    before the write; otherwise the reads that observe the write's target.
    """
    if not skip_tools:
        return observing_reads(plan, write_pos)
    found = []
    for pos in range(write_pos):
        step = plan[pos]
        if step.kind == "call" and step.tool_type == "READ" and step.call is not None and step.call.name in skip_tools:
            found.append(pos)
    return found


def trial_rng(seed: int, domain: str, task_id: str, trial: int) -> random.Random:
    """The random stream of one (task, trial); string seeds hash stably across processes."""
    return random.Random(f"tauguard:{seed}:{domain}:{task_id}:{trial}")


def draw_trial_faults(
    profile: FaultProfile, domain: str, task_id: str, trial: int, seed: int, plan: list[Step]
) -> list[ScheduledFault]:
    """The faults the sim agent will make in one trial."""
    if not profile.active:
        return []
    rng = trial_rng(seed, domain, task_id, trial)
    catalog = sorted(load_catalog(), key=lambda f: f.id)
    scheduled: list[ScheduledFault] = []
    exclusive = profile.draw == "first_deviation"
    for step in plan:
        if not step.is_write or step.call is None or step.write_index is None:
            continue
        taken = False
        # first_deviation: one number per write; the candidates share [0, 1) in catalog order.
        u_write, below = (rng.random(), 0.0) if exclusive else (0.0, 0.0)
        if profile.conflict_refusal > 0 and conflict_at(domain, task_id, step.write_index) is not None:
            # A compliant refusal of a gold write the policy forbids (drawn first; no draw at all
            # when the rate is 0, so other profiles' streams are unchanged).
            u = u_write if exclusive else rng.random()
            below = profile.conflict_refusal if exclusive else 0.0
            if u < profile.conflict_refusal:
                scheduled.append(ScheduledFault(
                    fault_id=CONFLICT_REFUSAL, fault_class="W", kind="premature_transfer", tool=step.call.name,
                    write_index=step.write_index, label="refuse",
                    clause=conflict_at(domain, task_id, step.write_index).clause,  # type: ignore[union-attr]
                ))
                taken = True
        for spec in catalog:
            rate = profile.rates.get(spec.id, 0.0)
            if rate <= 0 or not spec.applies_to(domain, step.call.name):
                continue
            u = 0.0 if exclusive else rng.random()
            if not exclusive and (taken or u >= rate):
                continue
            if spec.kind == "skip_read" and not skipped_reads(plan, plan.index(step), spec.skip_tools):
                continue  # nothing to skip: not a fault opportunity in this task
            if spec.kind == "bundle_confirmation" and not any(
                s.kind == "confirm" and s.write_index is not None for s in plan[: plan.index(step) - 1]
            ):
                continue  # no earlier confirmation to fold this write into
            if exclusive:
                below += rate
                if taken or u_write >= below:
                    continue
            scheduled.append(
                ScheduledFault(
                    fault_id=spec.id,
                    fault_class=spec.fault_class,
                    kind=spec.kind,
                    tool=step.call.name,
                    write_index=step.write_index,
                    generator=spec.generator,
                    label=spec.label,
                    clause=spec.clause(domain, step.call.name),
                    skip_tools=list(spec.skip_tools),
                )
            )
            taken = True
    if profile.unexplained_failure > 0 and trial_rng(seed, domain, f"unexplained:{task_id}", trial).random() < profile.unexplained_failure:
        scheduled.append(ScheduledFault(fault_id=UNEXPLAINED, fault_class="U", kind="unexplained", tool="*", label="allow"))
    temptation = temptations(domain).get(task_id)
    u = rng.random()
    if temptation is not None and u < profile.forbidden_write:
        scheduled.append(
            ScheduledFault(
                fault_id=f"pv.{domain}.{task_id}",
                fault_class="PV",
                kind="call",
                tool=temptation.name,
                write_index=None,
                label="refuse",
                clause=temptation.clause,
            )
        )
    return scheduled


def apply_plan_faults(domain: str, task_id: str, plan: list[Step], faults: list[ScheduledFault]) -> list[Step]:
    """The plan with plan-level faults applied and call-level faults marked on their steps."""
    unexplained = next((f for f in faults if f.kind == "unexplained"), None)
    if unexplained is not None:
        return _unexplained(domain, plan, unexplained.fault_id)
    plan = [s.model_copy(deep=True) for s in plan]
    by_write = {f.write_index: f for f in faults if f.write_index is not None}
    drop: set[int] = set()
    cut_at: int | None = None
    loop_at: int | None = None
    for pos, step in enumerate(plan):
        fault = by_write.get(step.write_index) if step.write_index is not None else None
        if fault is None:
            continue
        if step.kind == "confirm":
            if fault.kind in ("skip_confirmation", "bundle_confirmation"):
                drop.add(pos)
            if fault.kind == "bundle_confirmation":
                previous = next((p for p in range(pos - 1, -1, -1) if plan[p].kind == "confirm"), None)
                if previous is not None:
                    plan[previous].bundles_next = True
            if fault.kind in ("premature_stop", "premature_transfer") and cut_at is None:
                cut_at = pos
            continue
        # the write's call step
        step.fault_ids.append(fault.fault_id)
        if fault.kind == "repeat_loop" and loop_at is None and cut_at is None:
            loop_at = pos
        if fault.kind == "skip_read":
            drop.update(skipped_reads(plan, pos, fault.skip_tools))
    out: list[Step] = []
    for pos, step in enumerate(plan):
        if cut_at is not None and pos >= cut_at:
            break
        if pos in drop:
            # carry the fault mark to the write so the sim can record where it took effect
            continue
        out.append(step)
        if pos == loop_at:
            out.extend(_loop(step))
            break
    if cut_at is not None:
        stop_fault = next(f for f in faults if f.kind in ("premature_stop", "premature_transfer"))
        if stop_fault.kind == "premature_transfer":
            # A hand-off to a human where the agent could act (the sim user ends on the notice).
            handoff = ToolCallView(
                id=f"handoff-{task_id}", name=TRANSFER_TOOL, arguments={"summary": "The user needs help with their request."}
            )
            out.append(Step(kind="call", call=handoff, tool_type="GENERIC", gold=False, fault_ids=[stop_fault.fault_id]))
            out.append(Step(kind="say", infos=[TRANSFER_NOTICE]))
        else:
            out.append(Step(kind="close", fault_ids=[stop_fault.fault_id]))
    temptation_fault = next((f for f in faults if f.fault_class == "PV"), None)
    if temptation_fault is not None:
        t = temptations(domain)[task_id]
        call = ToolCallView(id=f"temptation-{task_id}", name=t.name, arguments=dict(t.arguments))
        # The pliable agent gives in where the gold plan communicates, transfers or closes.
        insert_at = next((i for i, s in enumerate(out) if _ends_request(s)), len(out))
        out[insert_at:insert_at] = [
            Step(kind="confirm", call=call, gold=False, fault_ids=[temptation_fault.fault_id]),
            Step(kind="call", call=call, tool_type="WRITE", gold=False, fault_ids=[temptation_fault.fault_id]),
        ]
    return out


def _loop(write: Step) -> list[Step]:
    """The copies of a write a repeat_loop fault makes after it (not gold: each one goes through)."""
    assert write.call is not None
    return [
        Step(kind="call", call=write.call.model_copy(update={"id": f"{write.call.id}-loop{n}"}), tool_type="WRITE",
             gold=False, fault_ids=list(write.fault_ids))
        for n in range(1, LOOP_REPEATS + 1)
    ]


def _unexplained(domain: str, plan: list[Step], fault_id: str) -> list[Step]:
    """An unexplained failure (:data:`UNEXPLAINED`): the plan's first read, else a read tool of the
    domain without arguments, repeated until τ² cuts the run."""
    from tauguard.tau2_adapter import compat as t2

    first = next((s.call for s in plan if s.kind == "call" and s.tool_type == "READ" and s.call is not None), None)
    if first is None:
        agent_types, _ = t2.tool_types(domain)
        name = sorted(n for n, kind in agent_types.items() if kind == "READ")[0]
        first = ToolCallView(id=f"unexplained-{name}", name=name, arguments={})
    return [
        Step(kind="call", call=first.model_copy(update={"id": f"{first.id}-unexplained{n}"}), tool_type="READ", gold=False, fault_ids=[fault_id])
        for n in range(LOOP_REPEATS)
    ]


def _ends_request(step: Step) -> bool:
    if step.kind in ("communicate", "close"):
        return True
    return step.kind == "call" and step.call is not None and step.call.name == TRANSFER_TOOL
