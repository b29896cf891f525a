"""Sim regressions of the classifier gate (issue 22, "the sim stays sound").

Clean k=1 must pass every base task with no documented gold/policy conflict. Airline task 42
(no conflict in ``tauguard/domains/gold_conflicts.toml``) was held: the packaged artifact said
verify on ``cancel_reservation`` and the decision cited ``airline.payment_limits``, a booking
clause, with no read to ask for, so the sim agent could never satisfy it. The unit mirrors the
clean run ``tauguard run --strategy classifier -d airline -k 1 --split base --faults none --seed 300``.
A sim result is about the simulator, not about real LLMs.
"""

from __future__ import annotations

import pytest

from tauguard.classifier.scope import clause_scope
from tauguard.domains.gold_conflicts import gold_conflicts
from conftest import make_unit

pytestmark = pytest.mark.usefixtures("tau2")


def test_clean_airline_task_42_passes_and_every_decision_cites_in_scope() -> None:
    from tauguard.execution.simulate import run_unit

    assert not [c for c in gold_conflicts() if c.domain == "airline" and c.task_id == "42"]
    record = run_unit(make_unit("airline", "42", seed=300, strategy="classifier"))
    events = record["guard_events"]
    assert any(e["tool_call"]["name"] == "cancel_reservation" for e in events)
    for event in events:
        assert event["rule_id"] is None or event["rule_id"] in clause_scope("airline", event["tool_call"]["name"]), event
    assert record["reward"] == 1.0
