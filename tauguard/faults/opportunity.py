"""Where the sim can make each fault: per gold write of a task's sim plan, the faults that fire there.

A fault is an opportunity at a write when the sim would make it if drawn there: its scope
covers the write's tool and, by kind, a generator returns a faulty call in the environment
just before the write (``call``), there is a read to drop (``skip_read``), or an earlier
confirmation to fold the write into (``bundle_confirmation``). `tauguard faults fit` divides its
counts by these opportunities, so a fitted rate is per write where the sim can make the fault.
"""

from __future__ import annotations

from typing import Any


def write_opportunities(domain: str, task: Any) -> list[set[str]]:
    """For each gold write of ``task`` (in order), the ids of the catalog faults the sim can make there."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.faults.catalog import load_catalog
    from tauguard.faults.draw import skipped_reads
    from tauguard.faults.generators import FaultContext, generate
    from tauguard.tau2_adapter.replay import call_tool, fresh_environment
    from tauguard.sim.plan_replay import plan_events
    from tauguard.sim.clean_plan import sim_plan

    plan = sim_plan(domain, task)
    write_pos = [pos for pos, s in enumerate(plan) if s.is_write and s.call is not None]
    if not write_pos:
        return []
    catalog = sorted(load_catalog(), key=lambda f: f.id)
    out: list[set[str]] = []
    for pos in write_pos:
        tool = plan[pos].call.name  # type: ignore[union-attr]
        here = set()
        for spec in catalog:
            if not spec.applies_to(domain, tool):
                continue
            if spec.kind == "skip_read" and not skipped_reads(plan, pos, spec.skip_tools):
                continue
            if spec.kind == "bundle_confirmation" and not any(s.kind == "confirm" and s.write_index is not None for s in plan[: pos - 1]):
                continue
            here.add(spec.id)
        out.append(here)
    call_faults = [s for s in catalog if s.kind == "call" and s.generator is not None]
    if not any(f in here for here in out for f in (s.id for s in call_faults)):
        return out
    # Call faults: run each generator in the environment just before its write, walking the
    # plan's conversation once (generators only read the environment).
    agent_types, _ = t2.tool_types(domain)
    env = fresh_environment(domain, task)
    index = 0
    for event in plan_events(task, plan):
        call = event.tool_call
        if event.kind not in ("agent_tool_call", "user_tool_call") or call is None:
            continue
        if event.kind == "agent_tool_call" and agent_types.get(call.name) == "WRITE" and index < len(out):
            for spec in call_faults:
                if spec.id in out[index] and generate(spec.generator, FaultContext(domain, task, call, env, index)) is None:  # type: ignore[arg-type]
                    out[index].discard(spec.id)
            index += 1
        call_tool(env, call)
    return out
