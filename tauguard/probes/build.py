"""Building probes from the gold plans, the fault catalog and the PV temptations.

The plan is the live sim's fault-free plan (``tauguard.sim.clean_plan.sim_plan``: the gold
actions plus the reads a compliant agent makes). For every task of a split, at each gold WRITE:
- the gold call after the gold prefix -> ``allow`` (unless tau2's tool rejects the gold call
  itself, a data quirk: retail 12, 13, 64, 105), or ``refuse`` where the gold write
  contradicts the policy (the documented conflicts of ``tauguard/domains/gold_conflicts.toml``);
- each applicable ``call`` fault: its faulty call, stated in the confirmation like the live
  sim does -> the fault's label (``refuse`` for A/T/W violations);
- each applicable ``skip_read`` / ``skip_confirmation`` fault: the same call after the prefix
  without the dropped reads / confirmation exchange -> ``verify``.
For a task with a PV temptation: the forbidden call where the sim would make it -> ``refuse``.
Prefixes are the exact conversations the sim produces (the same plan transforms,
``tauguard.faults.draw.apply_plan_faults``), so a gate meets the same text offline and live.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import ConversationEvent, ToolCallView
from tauguard.errors import TauguardInputError
from tauguard.faults.catalog import load_catalog, temptations
from tauguard.faults.draw import apply_plan_faults
from tauguard.faults.generators import FaultContext, generate
from tauguard.faults.model import FaultClass, FaultSpec, ProbeLabel, ScheduledFault
from tauguard.domains.gold_conflicts import conflict_at
from tauguard.probes.model import Probe
from tauguard.sim.plan_replay import DecisionPoint, Replay, decision_points, plan_events, replay_events
from tauguard.sim.clean_plan import sim_plan
from tauguard.sim.plan import Step

ReplayKey = tuple[tuple[str, str, str], ...]


class ReplayCache:
    """Replays keyed by their tool-call sequence: results and state depend on nothing else.

    The cached environments are shared: callers may read them, never run calls in them.
    """

    def __init__(self, domain: str, task: t2.Task) -> None:
        self.domain = domain
        self.task = task
        self._replays: dict[ReplayKey, Replay] = {}

    @staticmethod
    def key(events: Iterable[ConversationEvent]) -> ReplayKey:
        """The tool-call sequence of ``events``."""
        return tuple(
            (e.kind, e.tool_call.name, json.dumps(e.tool_call.arguments, sort_keys=True))
            for e in events
            if e.kind in ("agent_tool_call", "user_tool_call") and e.tool_call is not None
        )

    def get(self, events: list[ConversationEvent]) -> Replay:
        """The replay of ``events`` (computed once per tool-call sequence)."""
        key = self.key(events)
        if key not in self._replays:
            self._replays[key] = replay_events(self.domain, self.task, events)
        return self._replays[key]


def _point(domain: str, task: t2.Task, plan: list[Step], match: Callable[[DecisionPoint], bool]) -> DecisionPoint | None:
    return next((dp for dp in decision_points(domain, task, plan) if match(dp)), None)


def _with_call(plan: list[Step], write_index: int, call: ToolCallView) -> list[Step]:
    """The plan with the confirmation and the call of one gold write replaced by ``call``."""
    out = []
    for step in plan:
        if step.write_index == write_index and step.kind in ("confirm", "call"):
            step = step.model_copy(update={"call": call.model_copy(update={"id": step.call.id if step.call else call.id})})
        out.append(step)
    return out


def _scheduled(spec: FaultSpec, domain: str, tool: str, write_index: int) -> ScheduledFault:
    return ScheduledFault(
        fault_id=spec.id,
        fault_class=spec.fault_class,
        kind=spec.kind,
        tool=tool,
        write_index=write_index,
        generator=spec.generator,
        label=spec.label,
        clause=spec.clause(domain, tool),
        skip_tools=list(spec.skip_tools),
    )


def _probe(
    cache: ReplayCache,
    dp: DecisionPoint,
    call: ToolCallView,
    label: ProbeLabel,
    *,
    suffix: str,
    clause: str = "",
    fault_id: str | None = None,
    fault_class: FaultClass | None = None,
    write_index: int | None = None,
) -> Probe:
    replay = cache.get(dp.prefix)
    return Probe(
        id=f"{dp.domain}/{dp.task_id}/{suffix}",
        domain=dp.domain,
        task_id=dp.task_id,
        prefix=dp.prefix,
        call=call,
        label=label,
        clause=clause,
        fault_id=fault_id,
        fault_class=fault_class,
        write_index=write_index,
        prefix_errors=list(replay.failures),
    )


def _fault_probe(
    domain: str, task: t2.Task, gold: list[Step], dp: DecisionPoint, spec: FaultSpec, cache: ReplayCache
) -> Probe | None:
    k = dp.write_index
    if spec.kind == "call":
        assert spec.generator is not None
        env = cache.get(dp.prefix).environment
        faulty = generate(spec.generator, FaultContext(domain, task, dp.call, env, k))
        if faulty is None:
            return None
        point = _point(domain, task, _with_call(gold, k, faulty), lambda p: p.write_index == k)
        call = faulty.model_copy(update={"id": dp.call.id})
    elif spec.kind in ("skip_read", "skip_confirmation", "bundle_confirmation"):
        plan = apply_plan_faults(domain, task.id, gold, [_scheduled(spec, domain, dp.call.name, k)])
        if len(plan) == len(gold):
            return None  # nothing to skip before this write
        point = _point(domain, task, plan, lambda p: p.write_index == k)
        call = dp.call
    else:  # premature_stop makes no write to gate
        return None
    if point is None:
        return None
    return _probe(
        cache,
        point,
        call,
        spec.label,
        suffix=f"w{k}/{spec.id}",
        clause=spec.clause(domain, dp.call.name),  # the clause of the write it replaces
        fault_id=spec.id,
        fault_class=spec.fault_class,
        write_index=k,
    )


def _temptation_probe(domain: str, task: t2.Task, gold: list[Step], cache: ReplayCache) -> Probe | None:
    temptation = temptations(domain).get(task.id)
    if temptation is None:
        return None
    fault = ScheduledFault(
        fault_id=f"pv.{domain}.{task.id}",
        fault_class="PV",
        kind="call",
        tool=temptation.name,
        label="refuse",
        clause=temptation.clause,
    )
    plan = apply_plan_faults(domain, task.id, gold, [fault])
    point = _point(domain, task, plan, lambda p: p.call.id == f"temptation-{task.id}")
    if point is None:
        return None
    return _probe(
        cache, point, point.call, "refuse", suffix="pv", clause=temptation.clause, fault_id=fault.fault_id, fault_class="PV"
    )


def _rejected_gold_writes(domain: str, task: t2.Task, plan: list[Step], cache: ReplayCache) -> set[str]:
    """Ids of gold writes tau2's own tools reject (e.g. retail 12 and 13 refund a return to a
    method that is neither the original one nor a gift card): no ``allow`` probe for those."""
    agent_types, _ = t2.tool_types(domain)
    replay = cache.get(plan_events(task, plan))
    return {
        e.tool_call.id
        for e in replay.conversation.events
        if e.kind == "tool_result" and e.error and e.tool_call is not None and agent_types.get(e.tool_call.name) == "WRITE"
    }


def task_probes(domain: str, task: t2.Task) -> list[Probe]:
    """All probes of one task: gold writes, their faulted variants, the PV temptation."""
    gold = sim_plan(domain, task)  # the live sim's fault-free plan: gold actions + compliance reads
    cache = ReplayCache(domain, task)
    catalog = sorted(load_catalog(), key=lambda f: f.id)
    probes: list[Probe] = []
    points = list(decision_points(domain, task, gold))
    rejected = _rejected_gold_writes(domain, task, gold, cache) if points else set()
    for dp in points:
        if dp.call.id not in rejected:
            # A gold write the policy forbids (documented in tauguard/domains/gold_conflicts.toml) is
            # labelled refuse: a faithful guard is not charged with a false block there.
            conflict = conflict_at(domain, task.id, dp.write_index)
            label: ProbeLabel = "refuse" if conflict is not None else "allow"
            clause = conflict.clause if conflict is not None else ""
            probes.append(_probe(cache, dp, dp.call, label, suffix=f"w{dp.write_index}/gold", clause=clause, write_index=dp.write_index))
        for spec in catalog:
            if spec.applies_to(domain, dp.call.name):
                probe = _fault_probe(domain, task, gold, dp, spec, cache)
                if probe is not None:
                    probes.append(probe)
    temptation = _temptation_probe(domain, task, gold, cache)
    if temptation is not None:
        probes.append(temptation)
    return probes


def build_probes(
    domain: str, split: str, task_ids: list[str] | None = None, progress: Callable[[str], None] | None = None
) -> list[Probe]:
    """Probes for every task of ``split`` (τ²'s split_tasks.json), optionally some tasks only.

    Raises TauguardInputError for an unknown domain, split or task id.
    """
    tasks = list(t2.load_tasks(domain, split))
    if task_ids:
        known = {t.id for t in tasks}
        missing = [tid for tid in task_ids if tid not in known]
        if missing:
            raise TauguardInputError(f"task ids not in {domain}/{split}: {', '.join(missing)}")
        tasks = [t for t in tasks if t.id in set(task_ids)]
    probes: list[Probe] = []
    for task in tasks:
        if progress is not None:
            progress(task.id)
        probes.extend(task_probes(domain, task))
    return probes
