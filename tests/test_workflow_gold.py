"""Acceptance: on gold plans with the reads it asks for followed, the workflow guide holds only
documented gold/policy conflicts, writes τ²'s own tool rejects, and cancellations whose insured
basis waits on a reason the bare replay never states (the sim user states it in a simulation).

The core sweep (``tauguard.probes.sweep``; ``tauguard probes sweep --strategy workflow``); since
decision nodes are decided from tool results (clause coverage), the guide's holds are facts, not
only missing steps.
"""

from __future__ import annotations

import pytest

from tauguard.tau2_adapter import compat as t2
from tauguard.domains.gold_conflicts import gold_conflicts
from tauguard.strategy_api.guard import Verdict
from tauguard.probes.sweep import GoldDecision, sweep

UNSTATED_REASON = "is insured but no health or weather reason was stated"


@pytest.fixture(scope="module")
def gates() -> dict[str, list[GoldDecision]]:
    return {domain: sweep("workflow", domain, follow_reads=True) for domain in t2.DOMAINS}


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_workflow_holds_only_documented_conflicts_on_gold_writes(domain: str, gates: dict[str, list[GoldDecision]]) -> None:
    conflicts = {c.key for c in gold_conflicts()}
    held = [g for g in gates[domain] if g.verdict != Verdict.ALLOW]
    # the guide refuses (BLOCK/REVISE) only what the policy forbids: a documented conflict or a
    # write τ²'s own tool rejects; everything else it holds is a step or a fact still missing
    refused = [f"{g.task_id}#{g.write_index} {g.tool}: {g.reason}" for g in held
               if g.verdict != Verdict.VERIFY and (g.domain, g.task_id, g.write_index) not in conflicts and g.executed]
    assert not refused, "\n".join(refused)
    unexplained = [f"{g.task_id}#{g.write_index} {g.tool}: {g.reason}" for g in held
                   if (g.domain, g.task_id, g.write_index) not in conflicts and g.executed and UNSTATED_REASON not in g.reason]
    assert not unexplained, "\n".join(unexplained)


def test_workflow_holds_every_conflict_it_can_observe(gates: dict[str, list[GoldDecision]]) -> None:
    held = {(g.domain, g.task_id, g.write_index) for d in t2.DOMAINS for g in gates[d] if g.verdict != Verdict.ALLOW}
    # the cancellation basis, flown segments, the delay tie, the bag arithmetic, the identical exchange
    for key in [("airline", "7", 1), ("airline", "9", 0), ("airline", "2", 0), ("airline", "33", 1), ("retail", "18", 0), ("retail", "107", 0)]:
        assert key in held, key
