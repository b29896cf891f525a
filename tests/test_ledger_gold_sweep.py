"""Acceptance: no false blocks on gold writes (every base task of the three domains).

One replay per task gates each gold WRITE in order (the core sweep, ``tauguard.probes.sweep``), in
two modes: gold (exactly the gold plan) and compliant (``follow_reads``: also performing the reads
the gate asks for). ``tauguard probes sweep --strategy ledger [--no-follow-reads]`` prints the
same figures.
"""

from __future__ import annotations

import pytest

from tauguard_strategies.ledger import LedgerSession
from tauguard.tau2_adapter import compat as t2
from tauguard.domains.gold_conflicts import gold_conflicts
from tauguard.strategy_api.guard import Verdict
from tauguard.probes.sweep import GoldDecision, sweep_modes, verdict_counts
from tauguard.sim.plan_replay import decision_points, gate_after_prefix

# Gold writes tau2's own tool rejects (the gold action list holds a failing call): a REVISE or
# BLOCK there agrees with the environment.
REJECTED_BY_TAU2 = {("retail", "12", 0), ("retail", "13", 0), ("retail", "64", 0), ("retail", "105", 0)}

# Gold writes that contradict the policy text once the facts are observed, with the ledger's
# verdict in the compliant sweep: the one list in tauguard/domains/gold_conflicts.toml (conflicts the
# ledger cannot observe carry no ledger verdict).
POLICY_CONFLICTS = {c.key: (Verdict(c.ledger.verdict), c.ledger.rule_id) for c in gold_conflicts() if c.ledger is not None}


@pytest.fixture(scope="module")
def records() -> dict[str, list[GoldDecision]]:
    return {domain: sweep_modes("ledger", domain, modes=(False, True)) for domain in t2.DOMAINS}


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_every_gold_write_is_gated_in_both_modes(domain: str, records: dict) -> None:
    expected = sum(1 for task in t2.load_tasks(domain, "base")
                   for action in (task.evaluation_criteria.actions or []) if t2.is_agent_write(domain, action))
    for follow in (False, True):
        assert sum(verdict_counts(r for r in records[domain] if r.follow_reads == follow).values()) == expected > 0


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_gold_mode_revises_or_blocks_only_writes_tau2_rejects(domain: str, records: dict) -> None:
    hard = {(r.domain, r.task_id, r.write_index): (r.verdict, r.rule_id) for r in records[domain]
            if not r.follow_reads and r.verdict in (Verdict.REVISE, Verdict.BLOCK)}
    # a documented conflict whose facts the gold plan reads anyway is held as in the compliant mode
    assert {k: v for k, v in hard.items() if k not in REJECTED_BY_TAU2} == {k: v for k, v in POLICY_CONFLICTS.items() if k in hard}
    for r in records[domain]:
        if (r.domain, r.task_id, r.write_index) in REJECTED_BY_TAU2:
            assert not r.executed


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_gold_mode_verify_names_the_missing_reads(domain: str, records: dict) -> None:
    for r in records[domain]:
        if not r.follow_reads and r.verdict == Verdict.VERIFY:
            assert r.required_reads, (r.task_id, r.write_index, r.reason)
            # Where the gold plan does read the write's target, VERIFY is about another fact:
            # the user's identity, a flight status, the user's profile (payment methods, membership
            # for the bag allowance) or the new flights' routes, which the gold plan does not read.
            if r.plan_reads_target:
                assert r.domain == "airline" and r.rule_id in (
                    "airline.reservation_owner", "airline.booking_user", "airline.compensation_facts",
                    "airline.cancel_not_flown", "airline.cancel_requires_basis", "airline.change_payment",
                    "airline.bag_allowance", "airline.same_route"), (r.task_id, r.reason)


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_compliant_mode_allows_every_gold_write_but_known_conflicts(domain: str, records: dict) -> None:
    others = {(r.domain, r.task_id, r.write_index): (r.verdict, r.rule_id) for r in records[domain]
              if r.follow_reads and r.verdict != Verdict.ALLOW}
    expected = {k: v for k, v in POLICY_CONFLICTS.items() if k[0] == domain}
    rejected = {k for k in others if k in REJECTED_BY_TAU2}
    assert {k: v for k, v in others.items() if k not in rejected} == expected
    assert all(others[k][0] in (Verdict.REVISE, Verdict.BLOCK) for k in rejected)


def test_sweep_has_no_skipped_predicates(records: dict) -> None:
    # A predicate that crashes on a gold call would be skipped silently by the gate.
    for domain in t2.DOMAINS:
        for r in records[domain]:
            assert not r.evidence.get("skipped"), (r.task_id, r.write_index, r.tool)


# Several writes per task, so earlier writes' staleness and history matter.
@pytest.mark.parametrize(("domain", "task_id"), [
    ("airline", "7"),
    ("airline", "33"),
    ("retail", "29"),
    ("telecom", "[mobile_data_issue]data_mode_off|data_usage_exceeded|user_abroad_roaming_disabled_off[PERSONA:Hard]"),
])
def test_incremental_sweep_equals_gate_after_prefix(domain: str, task_id: str, records: dict) -> None:
    task = next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)
    agent_types = t2.tool_types(domain)[0]
    slow = []
    for point in decision_points(domain, task):  # a fresh session and a full replay per write
        decision, _ = gate_after_prefix(LedgerSession(domain, agent_types), domain, task, point.prefix, point.call)
        slow.append((point.write_index, decision.verdict, decision.rule_id))
    fast = [(r.write_index, r.verdict, r.rule_id) for r in records[domain] if r.task_id == task_id and not r.follow_reads]
    assert slow and slow == fast

