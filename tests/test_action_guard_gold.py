"""Acceptance: the compiled backend never falsely blocks a gold write (all base tasks).

Each task's gold plan is replayed once and its WRITEs are gated in order (the core sweep,
``tauguard.probes.sweep``, without following the requested reads). Gold writes may be held for
verification (VERIFY) where the gold plan skips a read or a dialogue step the policy asks for,
but a write the environment accepts must never get REVISE or BLOCK unless it is a documented
gold/policy conflict (``tauguard/domains/gold_conflicts.toml``).
"""

from __future__ import annotations

import pytest

from tauguard.tau2_adapter import compat as t2
from tauguard.domains.gold_conflicts import gold_conflicts
from tauguard.strategy_api.guard import Verdict
from tauguard.probes.sweep import GoldDecision, sweep, verdict_counts


@pytest.fixture(scope="module")
def gates() -> dict[str, list[GoldDecision]]:
    return {domain: sweep("action-guard", domain, follow_reads=False) for domain in t2.DOMAINS}


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_every_gold_write_is_gated(domain: str, gates: dict[str, list[GoldDecision]]) -> None:
    expected = sum(
        1
        for task in t2.load_tasks(domain, "base")
        for action in (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
        if t2.is_agent_write(domain, action)
    )
    assert expected > 0
    assert len(gates[domain]) == expected


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_no_false_block_on_executed_gold_writes(domain: str, gates: dict[str, list[GoldDecision]]) -> None:
    # a documented gold/policy conflict (tauguard/domains/gold_conflicts.toml) is held on purpose
    conflicts = {c.key for c in gold_conflicts()}
    false_blocks = [
        f"{g.task_id}#{g.write_index} {g.tool}: {g.verdict.value} {g.reason}"
        for g in gates[domain]
        if g.executed and g.verdict in (Verdict.REVISE, Verdict.BLOCK) and (g.domain, g.task_id, g.write_index) not in conflicts
    ]
    assert not false_blocks, "\n".join(false_blocks)
    counts = verdict_counts(gates[domain])
    assert sum(counts.values()) == len(gates[domain])


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_sim_dialogue_satisfies_the_dialogue_checks(domain: str, gates: dict[str, list[GoldDecision]]) -> None:
    # The sim states each write and the user says yes: confirmation (and, in retail, the
    # reason carried by the confirmed statement) must never hold a gold write.
    held = [(g.task_id, item) for g in gates[domain] for item in g.findings if item.endswith((".confirmation", ".reason_confirmed"))]
    assert not held


def test_some_gold_writes_pass_outright(gates: dict[str, list[GoldDecision]]) -> None:
    # Where the gold plan contains the reads the policy asks for, the guard lets writes through.
    assert verdict_counts(gates["airline"])["ALLOW"] > 0
    assert verdict_counts(gates["retail"])["ALLOW"] > 0


def test_gold_writes_the_tool_rejects_are_held(gates: dict[str, list[GoldDecision]]) -> None:
    # tau2's gold actions include attempts the environment rejects (e.g. a refund to a
    # non-original method); the guard should not let those through either.
    rejected = [g for domain in t2.DOMAINS for g in gates[domain] if not g.executed]
    assert rejected
    assert all(g.verdict != Verdict.ALLOW for g in rejected)
